import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StackLayout } from './config.js';
import { stackClassDataSharing } from './class-data-sharing.js';
import { spawnDetached, stopProcess } from './processes.js';

const LOG4J2_PROPERTIES = `status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
logger.reflections.name = org.reflections
logger.reflections.level = ERROR
`;

/**
 * What a stack JVM takes from the launcher's environment: where to find programs and its home, the
 * locale, the time zone, the Java install and the temporary folder. Nothing else: a secret in the
 * launcher's environment (a cloud token, another program's password) stays out of the JVM's
 * /proc/<pid>/environ and out of reach of what runs in it (a connector configuration, a plugin).
 */
const JVM_ENVIRONMENT: readonly (string | RegExp)[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  /^LC_[A-Z]+$/,
  'TZ',
  'JAVA_HOME',
  'TMPDIR',
];

/** The allowlisted part of `inherited`, then the component's own variables (which win). */
function jvmEnvironment(inherited: NodeJS.ProcessEnv, own: Record<string, string> = {}): Record<string, string> {
  const kept = Object.entries(inherited).filter(
    (entry): entry is [string, string] =>
      entry[1] !== undefined &&
      JVM_ENVIRONMENT.some((allowed) => (typeof allowed === 'string' ? allowed === entry[0] : allowed.test(entry[0]))),
  );
  return { ...Object.fromEntries(kept), ...own };
}

/**
 * Starts a JVM of the stack detached, with a bounded heap and its output in the stack's log folder.
 * Its command line is readable by every local user (/proc/<pid>/cmdline): no secret in `args` or
 * `systemProperties`; pass secrets in `env` or in an owner-only file.
 */
export function launchJvm(
  layout: StackLayout,
  opts: {
    name: string;
    heapMb: number;
    classpath?: string;
    jar?: string;
    mainClass?: string;
    args: string[];
    systemProperties?: Record<string, string>;
    cwd?: string;
    /** The java command; the default `java` unless the component needs a newer one. */
    java?: string;
    /**
     * The component's own environment, on top of the allowlisted part of the launcher's
     * (JVM_ENVIRONMENT): a secret it reads from its environment goes here, never on its command line.
     */
    env?: Record<string, string>;
    /**
     * Compile with C1 only (-XX:TieredStopAtLevel=1): a quicker start on 2 cores, where C2 competes
     * with the start for the CPU, at the cost of peak throughput. For a JVM that serves little.
     */
    quickCompilerOnly?: boolean;
  },
): void {
  const log4j = join(layout.home, 'log4j2.properties');
  if (!existsSync(log4j)) {
    mkdirSync(layout.home, { recursive: true });
    writeFileSync(log4j, LOG4J2_PROPERTIES);
  }
  const properties = {
    'stagefront.stack': layout.home,
    'log4j2.configurationFile': log4j,
    'java.awt.headless': 'true',
    ...opts.systemProperties,
  };
  const java = opts.java ?? 'java';
  const javaArgs = [
    `-Xms${Math.min(256, opts.heapMb)}m`,
    `-Xmx${opts.heapMb}m`,
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    ...stackClassDataSharing(layout, opts.name, java, opts.jar ?? opts.classpath ?? ''),
    ...(opts.quickCompilerOnly ? ['-XX:TieredStopAtLevel=1'] : []),
    ...Object.entries(properties).map(([k, v]) => `-D${k}=${v}`),
    ...(opts.jar ? ['-jar', opts.jar] : ['-cp', opts.classpath ?? '', opts.mainClass ?? '']),
    ...opts.args,
  ];
  spawnDetached({
    command: java,
    args: javaArgs,
    logFile: join(layout.logDir, `${opts.name}.log`),
    pidFile: jvmPidFile(layout, opts.name),
    cwd: opts.cwd,
    env: jvmEnvironment(process.env, opts.env),
  });
}

export function jvmPidFile(layout: StackLayout, name: string): string {
  return join(layout.runDir, `${name}.pid`);
}

/** Graceful stop (SIGTERM lets Kafka and Connect flush), SIGKILL after the grace period. */
export async function stopJvm(pid: number | undefined, graceMs = 30_000): Promise<void> {
  if (pid !== undefined) await stopProcess(pid, graceMs);
}
