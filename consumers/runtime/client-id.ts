/**
 * The Kafka client id of a consumer program's process, `<program>-<pid>`: the group coordinator
 * names each member by it, so an operator (or a drill) can tell which process owns which partition
 * when several instances run.
 */
export function consumerClientId(program: string, pid: number = process.pid): string {
  return `${program}-${pid}`;
}
