/**
 * The parts of the rehearsal that need no stack: when buyers arrive around the drills, how
 * --drill and REHEARSAL_DRILLS are read, and what external mode demands.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/settings.js';
import { DRILL_TARGETS, parseDrills } from '../../rehearsal/drill-targets.js';
import { CrowdSchedule } from '../../rehearsal/schedule.js';
import { parseRehearsalConfig } from '../../rehearsal/settings.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    parseRehearsalConfig(env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
}

describe('the crowd schedule', () => {
  it('without drills every buyer arrives at once', async () => {
    const schedule = new CrowdSchedule(100, 0, 30_000, 1_000);
    expect(await schedule.arrival(0)).toBe(1_000);
    expect(await schedule.arrival(99)).toBe(1_000);
  });

  it('without drills but with an arrival time the buyers arrive evenly over it', async () => {
    const schedule = new CrowdSchedule(100, 0, 30_000, 1_000, 180_000);
    expect(await schedule.arrival(0)).toBe(1_000);
    expect(await schedule.arrival(50)).toBe(1_000 + 90_000);
    expect(await schedule.arrival(99)).toBe(1_000 + 0.99 * 180_000);
    expect(parseRehearsalConfig({ REHEARSAL_ARRIVAL_MS: '180000' }).arrivalMs).toBe(180_000);
    expect(parseRehearsalConfig({}).arrivalMs).toBe(0);
  });

  it('with drills cuts the crowd into drills + 1 phases; a phase opens when the one before is over and its drill is back', async () => {
    const schedule = new CrowdSchedule(90, 2, 30_000, 0);
    expect([0, 29, 30, 59, 60, 89].map((i) => schedule.phaseOf(i))).toEqual([0, 0, 1, 1, 2, 2]);
    expect(await schedule.arrival(15)).toBe(15_000);
    expect(await schedule.strikeAt(0)).toBe(15_000);
    // Drill 0's part came back late, at 70 s: phase 1 opens then, not at 30 s.
    schedule.drillDone(0, 70_000);
    expect(await schedule.phaseOpened(1)).toBe(70_000);
    expect(await schedule.arrival(30)).toBe(70_000);
    expect(await schedule.strikeAt(1)).toBe(85_000);
    // Drill 1 was back early: phase 2 opens when phase 1's time is up.
    schedule.drillDone(1, 80_000);
    expect(await schedule.arrival(60)).toBe(100_000);
  });

  it('holds the buyers of a later phase until it opens', async () => {
    const schedule = new CrowdSchedule(10, 1, 1_000, 0);
    let arrived = false;
    const later = schedule.arrival(9).then((at) => {
      arrived = true;
      return at;
    });
    await Promise.resolve();
    expect(arrived).toBe(false);
    schedule.drillDone(0, 5_000);
    expect(await later).toBe(5_000 + 0.8 * 1_000);
  });
});

describe('drill targets', () => {
  it('reads a comma separated list, "all" and nothing', () => {
    expect(parseDrills('connect, consumer')).toEqual(['connect', 'consumer']);
    // failover is one-way (the stack runs on the promoted standby afterwards): never part of all.
    expect(parseDrills('all')).toEqual(DRILL_TARGETS.filter((t) => t !== 'failover'));
    expect(parseDrills('')).toEqual([]);
  });

  it('takes failover once, as the last drill', () => {
    expect(parseDrills('consumer,failover')).toEqual(['consumer', 'failover']);
    expect(() => parseDrills('failover,consumer')).toThrow(/failover can be drilled once, as the last drill/);
    expect(() => parseDrills('failover,failover')).toThrow(/failover can be drilled once, as the last drill/);
  });

  it('refuses an unknown target, naming it and the known ones', () => {
    expect(() => parseDrills('connect,postgres')).toThrow(
      /unknown drill target "postgres": expected connect, kafka, registry, consumer, seat-db, sweeper, failover or all/,
    );
    expect(problemsOf({ REHEARSAL_DRILLS: 'zookeeper' })).toEqual([
      expect.stringMatching(/^REHEARSAL_DRILLS="zookeeper" is not valid/),
    ]);
  });
});

describe('external mode', () => {
  it('needs every REHEARSAL_*_URL and names each one missing', () => {
    const problems = problemsOf({
      REHEARSAL_STACK: 'external',
      REHEARSAL_ALERTMANAGER_URL: 'http://alertmanager:9093',
    });
    expect(problems.map((p) => p.split(' ')[0])).toEqual([
      'REHEARSAL_SEAT_ADMIN_URL',
      'REHEARSAL_CONSUMER_ADMIN_URL',
      'REHEARSAL_MAILPIT_URL',
    ]);
    expect(problems[0]).toMatch(/required when REHEARSAL_STACK=external.*e\.g\. postgres:\/\//);
  });

  /** External mode with every URL it needs. */
  const EXTERNAL = {
    REHEARSAL_STACK: 'external',
    REHEARSAL_SEAT_ADMIN_URL: 'postgres://postgres:x@db:5432/stagefront',
    REHEARSAL_CONSUMER_ADMIN_URL: 'postgres://postgres:x@db:5432/stagefront_consumers',
    REHEARSAL_ALERTMANAGER_URL: 'http://alertmanager:9093',
    REHEARSAL_MAILPIT_URL: 'http://mailpit:8025',
  };

  it('refuses drills, which kill native processes', () => {
    const problems = problemsOf({
      ...EXTERNAL,
      REHEARSAL_DRILLS: 'connect',
    });
    expect(problems).toEqual([expect.stringMatching(/REHEARSAL_DRILLS=connect needs REHEARSAL_STACK=native/)]);
  });

  it('refuses consumer instances of its own, which an external stack runs itself', () => {
    const problems = problemsOf({
      ...EXTERNAL,
      REHEARSAL_CONSUMER_INSTANCES: '2',
    });
    expect(problems).toEqual([expect.stringMatching(/REHEARSAL_CONSUMER_INSTANCES=2 needs REHEARSAL_STACK=native/)]);
    expect(problemsOf({ REHEARSAL_CONSUMER_INSTANCES: '2' })).toEqual([]);
  });

  it('native mode needs none of them', () => {
    expect(problemsOf({})).toEqual([]);
    expect(problemsOf({ REHEARSAL_STACK: 'compose' })).toEqual([
      expect.stringMatching(/^REHEARSAL_STACK="compose" is not valid: expected one of native, external/),
    ]);
  });
});
