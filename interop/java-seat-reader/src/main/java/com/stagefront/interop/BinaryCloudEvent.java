package com.stagefront.interop;

import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * A CloudEvent read from a Kafka record in binary content mode, as the CloudEvents Kafka protocol
 * binding lays it out: each attribute is a header `ce_<name>` (UTF-8 text), `datacontenttype` is
 * the `content-type` header, and the record value is the data, as it is. (The CloudEvents Java
 * SDK's Kafka binding does the same; this reader uses the Kafka client alone.)
 *
 * Besides the attributes every CloudEvent has (id, source, specversion, type), the seat service's
 * events always carry time and subject (the aggregate id, also the record key); dataschema (the
 * writer schema's URL in the registry) may be there.
 */
record BinaryCloudEvent(String id, String type, String source, String specversion, OffsetDateTime time, String subject,
                        String datacontenttype, String dataschema, byte[] data) {

  static BinaryCloudEvent from(ConsumerRecord<String, byte[]> record) {
    refuseRepeatedAttributes(record);
    String contentType = header(record, "content-type");
    if (contentType != null && contentType.startsWith("application/cloudevents")) {
      throw problem(record, "is a structured-mode CloudEvent (content-type " + contentType + "); these topics carry binary mode only: leave this topic out of --topics");
    }
    String specversion = required(record, "ce_specversion");
    if (!specversion.equals("1.0")) {
      throw problem(record, "has ce_specversion " + specversion + ", not 1.0: this reader knows CloudEvents 1.0 only");
    }
    String time = required(record, "ce_time");
    OffsetDateTime parsedTime;
    try {
      parsedTime = OffsetDateTime.parse(time);
    } catch (DateTimeParseException e) {
      throw problem(record, "has ce_time " + time + ", not an RFC 3339 timestamp: fix the producer's ce_time header");
    }
    return new BinaryCloudEvent(
        required(record, "ce_id"),
        required(record, "ce_type"),
        required(record, "ce_source"),
        specversion,
        parsedTime,
        required(record, "ce_subject"),
        required(record, "content-type"),
        header(record, "ce_dataschema"),
        record.value());
  }

  /** Where a record is, for messages: topic/partition/offset. */
  static String position(ConsumerRecord<?, ?> record) {
    return record.topic() + "/" + record.partition() + "/" + record.offset();
  }

  static ReaderException problem(ConsumerRecord<?, ?> record, String what) {
    return new ReaderException(ReaderException.BAD_RECORD, "record " + position(record) + " " + what);
  }

  private static String required(ConsumerRecord<String, byte[]> record, String name) {
    String value = header(record, name);
    if (value == null || value.isEmpty()) {
      throw problem(record, "has no " + name + " header, so it is not a CloudEvent in Kafka binary mode: "
          + "fix the producer (the outbox connector's header fields) or leave this topic out of --topics");
    }
    return value;
  }

  /**
   * A CloudEvent attribute (a ce_* header, or content-type) appears once. Twice, readers disagree on
   * its value (the TypeScript runtime used to read the first, Kafka's lastHeader the last), so the
   * record is refused, as the TypeScript consumers refuse it.
   */
  private static void refuseRepeatedAttributes(ConsumerRecord<String, byte[]> record) {
    Map<String, Integer> counts = new TreeMap<>();
    for (Header header : record.headers()) {
      if (header.key().startsWith("ce_") || header.key().equals("content-type")) counts.merge(header.key(), 1, Integer::sum);
    }
    for (Map.Entry<String, Integer> count : counts.entrySet()) {
      if (count.getValue() > 1) {
        throw problem(record, "has the header " + count.getKey() + " " + count.getValue() + " times: a CloudEvent attribute must appear once, "
            + "or readers disagree on its value; fix the producer");
      }
    }
  }

  /** The header of that name (refuseRepeatedAttributes has made sure an attribute is there once), as UTF-8 text. */
  private static String header(ConsumerRecord<String, byte[]> record, String name) {
    Header header = record.headers().lastHeader(name);
    return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
  }
}
