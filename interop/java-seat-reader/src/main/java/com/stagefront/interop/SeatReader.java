package com.stagefront.interop;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintStream;
import java.time.Duration;
import java.time.format.DateTimeFormatter;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads the seat service's events from Kafka (CloudEvents in binary mode, Avro values in the
 * registry wire format) and prints one JSON line per event on stdout. Stops after the expected
 * number of events, or once no record came for the idle timeout. A record it cannot read stops it
 * with one line on stderr naming the problem and the fix, and a non-zero exit code.
 */
public final class SeatReader {
  private static final ObjectMapper JSON = new ObjectMapper();

  private SeatReader() {}

  public static void main(String[] args) {
    if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
      System.out.print(Settings.help());
      return;
    }
    try {
      Settings settings = Settings.parse(args, System.getenv());
      int seen = read(settings, System.out);
      System.err.println("java-seat-reader: read " + seen + " events from " + String.join(", ", settings.topics()));
    } catch (ReaderException e) {
      System.out.flush();
      System.err.println("java-seat-reader: " + e.getMessage());
      System.exit(e.exitCode);
    }
  }

  /** Reads until the expected count or the idle timeout; returns how many events it printed. */
  static int read(Settings settings, PrintStream out) {
    WriterSchemas schemas = new WriterSchemas(settings.registryUrl());
    try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(consumerConfig(settings), new StringDeserializer(), new ByteArrayDeserializer())) {
      consumer.subscribe(settings.topics());
      int seen = 0;
      long lastRecordAt = System.nanoTime();
      while (settings.expectedEvents() == 0 || seen < settings.expectedEvents()) {
        ConsumerRecords<String, byte[]> records = consumer.poll(Duration.ofMillis(250));
        if (records.isEmpty()) {
          if (Duration.ofNanos(System.nanoTime() - lastRecordAt).toMillis() >= settings.idleTimeoutMs()) break;
          continue;
        }
        for (ConsumerRecord<String, byte[]> record : records) {
          out.println(eventLine(record, schemas));
          seen++;
        }
        out.flush();
        // At least once: offsets are committed only after the events are printed.
        consumer.commitSync();
        lastRecordAt = System.nanoTime();
      }
      if (seen < settings.expectedEvents()) {
        throw new ReaderException(ReaderException.TOO_FEW_EVENTS, "read " + seen + " of " + settings.expectedEvents() + " events, then no new record for "
            + settings.idleTimeoutMs() + " ms: check that Kafka answers at " + String.join(",", settings.brokers()) + ", that the topics "
            + String.join(", ", settings.topics()) + " exist and are the ones the events go to, or raise --idle-timeout-ms");
      }
      return seen;
    }
  }

  private static Properties consumerConfig(Settings settings) {
    Properties config = new Properties();
    config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, String.join(",", settings.brokers()));
    config.put(ConsumerConfig.GROUP_ID_CONFIG, settings.groupId());
    config.put(ConsumerConfig.CLIENT_ID_CONFIG, "java-seat-reader");
    config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    // A reader never creates a topic by naming it.
    config.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
    return config;
  }

  /** One event as a JSON line: where it was, its CloudEvent attributes, and its data decoded. */
  private static String eventLine(ConsumerRecord<String, byte[]> record, WriterSchemas schemas) {
    BinaryCloudEvent event = BinaryCloudEvent.from(record);
    ObjectNode line = JSON.createObjectNode();
    line.put("topic", record.topic());
    line.put("partition", record.partition());
    line.put("offset", record.offset());
    line.put("key", record.key());
    line.put("id", event.id());
    line.put("type", event.type());
    line.put("source", event.source());
    line.put("subject", event.subject());
    line.put("time", event.time().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME));
    line.put("datacontenttype", event.datacontenttype());
    line.put("dataschema", event.dataschema());
    line.set("data", AvroJson.toJson(WireFormat.decode(record, schemas)));
    try {
      return JSON.writeValueAsString(line);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a JSON tree always serializes", e);
    }
  }
}
