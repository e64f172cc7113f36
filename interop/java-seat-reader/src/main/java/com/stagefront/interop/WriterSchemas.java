package com.stagefront.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.avro.Schema;

/**
 * Writer schemas by id from the registry's Confluent-compatible API (GET /schemas/ids/{id}),
 * fetched once each: an id never changes meaning.
 */
final class WriterSchemas {
  private final String registryUrl;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final ObjectMapper json = new ObjectMapper();
  private final Map<Integer, Schema> cache = new HashMap<>();

  WriterSchemas(String registryUrl) {
    this.registryUrl = registryUrl;
  }

  Schema byId(int id) {
    Schema schema = cache.get(id);
    if (schema == null) {
      schema = fetch(id);
      cache.put(id, schema);
    }
    return schema;
  }

  private Schema fetch(int id) {
    HttpRequest request = HttpRequest.newBuilder(URI.create(registryUrl + "/schemas/ids/" + id))
        .header("Accept", "application/vnd.schemaregistry.v1+json")
        .timeout(Duration.ofSeconds(10))
        .GET()
        .build();
    HttpResponse<String> response;
    try {
      response = http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new ReaderException(ReaderException.REGISTRY_UNAVAILABLE, "the schema registry at " + registryUrl + " does not answer (" + e
          + "): start it (npm run stack -- start) or pass --registry / SCHEMA_REGISTRY_URL with its Confluent-compatible API", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ReaderException(ReaderException.REGISTRY_UNAVAILABLE, "interrupted while fetching schema id " + id, e);
    }
    if (response.statusCode() == 404) {
      throw new ReaderException(ReaderException.BAD_RECORD, "schema id " + id + " is not in the registry at " + registryUrl
          + ": pass the producer's registry with --registry / SCHEMA_REGISTRY_URL, ending with its Confluent-compatible API (/apis/ccompat/v7)");
    }
    if (response.statusCode() != 200) {
      throw new ReaderException(ReaderException.REGISTRY_UNAVAILABLE, "the schema registry at " + registryUrl + " answered HTTP "
          + response.statusCode() + " for schema id " + id + ": check that the URL ends with its Confluent-compatible API (/apis/ccompat/v7)");
    }
    try {
      JsonNode body = json.readTree(response.body());
      return new Schema.Parser().parse(body.path("schema").asText());
    } catch (IOException | RuntimeException e) {
      throw new ReaderException(ReaderException.REGISTRY_UNAVAILABLE, "schema id " + id + " from " + registryUrl
          + " is not an Avro schema (" + e.getMessage() + "): check that the URL ends with its Confluent-compatible API (/apis/ccompat/v7)", e);
    }
  }
}
