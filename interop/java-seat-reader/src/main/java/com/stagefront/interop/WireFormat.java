package com.stagefront.interop;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The registry wire format of the record values: magic byte 0, the writer schema's id as a 4-byte
 * big-endian int, then the Avro binary encoding of the value with that schema.
 */
final class WireFormat {
  private static final byte MAGIC_BYTE = 0;
  private static final int HEADER_BYTES = 5;

  private WireFormat() {}

  /** The value decoded with its writer's schema, fetched from the registry by id. */
  static Object decode(ConsumerRecord<?, byte[]> record, WriterSchemas schemas) {
    byte[] value = record.value();
    if (value == null || value.length < HEADER_BYTES) {
      throw BinaryCloudEvent.problem(record, "has a value of " + (value == null ? 0 : value.length)
          + " bytes, too short for the registry wire format (magic byte 0, 4-byte schema id, Avro): the producer must serialize through the registry");
    }
    if (value[0] != MAGIC_BYTE) {
      throw BinaryCloudEvent.problem(record, String.format("starts with byte 0x%02x, not the registry wire format's magic byte 0x00: "
          + "the producer must serialize through the registry (Confluent wire format)", value[0]));
    }
    int schemaId = ByteBuffer.wrap(value, 1, 4).getInt();
    Schema writer = schemas.byId(schemaId);
    BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(value, HEADER_BYTES, value.length - HEADER_BYTES, null);
    try {
      Object decoded = new GenericDatumReader<>(writer).read(null, decoder);
      if (!decoder.isEnd()) throw new IOException((value.length - HEADER_BYTES) + " bytes hold more than one value");
      return decoded;
    } catch (IOException | RuntimeException e) {
      throw BinaryCloudEvent.problem(record, "does not decode with schema id " + schemaId + " (" + e.getMessage()
          + "): the producer wrote it with another schema than the one registered under that id");
    }
  }
}
