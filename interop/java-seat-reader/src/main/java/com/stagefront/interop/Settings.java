package com.stagefront.interop;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The reader's settings: each one a command-line flag or an environment variable, with a default.
 * A flag wins over the variable. A bad value stops the reader with one line naming it and the fix.
 */
record Settings(List<String> brokers, String registryUrl, List<String> topics, String groupId, int expectedEvents, long idleTimeoutMs) {

  private record Setting(String flag, String env, String defaultValue, String description) {}

  private static final List<Setting> TABLE = List.of(
      new Setting("--brokers", "KAFKA_BROKERS", "127.0.0.1:19092", "Kafka bootstrap servers, comma-separated."),
      new Setting("--registry", "SCHEMA_REGISTRY_URL", "http://127.0.0.1:18081/apis/ccompat/v7", "Base URL of the registry's Confluent-compatible API."),
      new Setting("--topics", "READER_TOPICS", "", "Topics to read, comma-separated (e.g. <prefix>.seat,<prefix>.order). Required."),
      new Setting("--group", "READER_GROUP_ID", "java-seat-reader", "Consumer group; a new group reads every topic from the beginning."),
      new Setting("--expect", "READER_EXPECTED_EVENTS", "0", "Stop after this many events; 0 reads until the topics are idle."),
      new Setting("--idle-timeout-ms", "READER_IDLE_TIMEOUT_MS", "10000", "Stop after this long without a new record."));

  static String help() {
    StringBuilder text = new StringBuilder("java -jar java-seat-reader.jar [--flag=value ...]\n\n");
    for (Setting s : TABLE) {
      text.append(String.format("  %-18s %-24s default %-42s %s%n", s.flag(), s.env(), s.defaultValue().isEmpty() ? "(none)" : s.defaultValue(), s.description()));
    }
    return text.toString();
  }

  static Settings parse(String[] args, Map<String, String> env) {
    Map<String, String> flags = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      String[] pair = arg.split("=", 2);
      if (TABLE.stream().noneMatch(s -> s.flag().equals(pair[0]))) {
        throw new ReaderException(ReaderException.BAD_SETTING, "unknown argument " + arg + ": see --help for the flags");
      }
      if (pair.length == 2) flags.put(pair[0], pair[1]);
      else if (i + 1 < args.length) flags.put(pair[0], args[++i]);
      else throw new ReaderException(ReaderException.BAD_SETTING, arg + " needs a value: " + arg + "=<value>");
    }
    Map<String, String> values = new HashMap<>();
    for (Setting s : TABLE) values.put(s.env(), flags.getOrDefault(s.flag(), env.getOrDefault(s.env(), s.defaultValue())).trim());

    List<String> topics = list(values.get("READER_TOPICS"));
    if (topics.isEmpty()) {
      throw new ReaderException(ReaderException.BAD_SETTING, "no topics to read: pass --topics=<prefix>.seat,<prefix>.order or set READER_TOPICS");
    }
    return new Settings(
        list(values.get("KAFKA_BROKERS")),
        values.get("SCHEMA_REGISTRY_URL").replaceAll("/+$", ""),
        topics,
        values.get("READER_GROUP_ID"),
        (int) number("READER_EXPECTED_EVENTS", values.get("READER_EXPECTED_EVENTS")),
        number("READER_IDLE_TIMEOUT_MS", values.get("READER_IDLE_TIMEOUT_MS")));
  }

  private static List<String> list(String value) {
    return Arrays.stream(value.split(",")).map(String::trim).filter(v -> !v.isEmpty()).toList();
  }

  private static long number(String env, String value) {
    try {
      long n = Long.parseLong(value);
      if (n >= 0 && n <= Integer.MAX_VALUE) return n;
    } catch (NumberFormatException ignored) {
      // reported below
    }
    throw new ReaderException(ReaderException.BAD_SETTING, env + "=" + value + " is not a whole number of 0 or more: set it (or its flag) to one, e.g. 10000");
  }
}
