package com.stagefront.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.Collection;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericEnumSymbol;
import org.apache.avro.generic.GenericFixed;
import org.apache.avro.generic.GenericRecord;

/**
 * A decoded Avro value as plain JSON: records as objects, strings as text, longs as numbers. Logical
 * types stay what Avro writes (timestamp-millis: milliseconds since the epoch), as the TypeScript
 * consumers read them; unions show the value alone; bytes and fixed are base64.
 */
final class AvroJson {
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private AvroJson() {}

  static JsonNode toJson(Object value) {
    if (value == null) return NODES.nullNode();
    if (value instanceof GenericRecord record) {
      ObjectNode object = NODES.objectNode();
      for (Schema.Field field : record.getSchema().getFields()) object.set(field.name(), toJson(record.get(field.pos())));
      return object;
    }
    if (value instanceof Collection<?> items) {
      ArrayNode array = NODES.arrayNode();
      for (Object item : items) array.add(toJson(item));
      return array;
    }
    if (value instanceof Map<?, ?> map) {
      ObjectNode object = NODES.objectNode();
      for (Map.Entry<?, ?> entry : map.entrySet()) object.set(entry.getKey().toString(), toJson(entry.getValue()));
      return object;
    }
    if (value instanceof CharSequence || value instanceof GenericEnumSymbol<?>) return NODES.textNode(value.toString());
    if (value instanceof Integer n) return NODES.numberNode(n);
    if (value instanceof Long n) return NODES.numberNode(n);
    if (value instanceof Float n) return NODES.numberNode(n);
    if (value instanceof Double n) return NODES.numberNode(n);
    if (value instanceof Boolean b) return NODES.booleanNode(b);
    if (value instanceof ByteBuffer bytes) return NODES.textNode(Base64.getEncoder().encodeToString(copy(bytes)));
    if (value instanceof GenericFixed fixed) return NODES.textNode(Base64.getEncoder().encodeToString(fixed.bytes()));
    throw new IllegalArgumentException("no JSON form for the Avro value of class " + value.getClass().getName());
  }

  private static byte[] copy(ByteBuffer buffer) {
    byte[] bytes = new byte[buffer.remaining()];
    buffer.duplicate().get(bytes);
    return bytes;
  }
}
