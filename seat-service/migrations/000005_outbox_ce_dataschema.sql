-- ce_dataschema: where a consumer fetches the writer's Avro schema of this row's payload (the
-- registry's `<base>/schemas/ids/<id>`, the id in the payload's framing). The Outbox Event Router
-- places it in the header of the same name. Nullable: rows written before this column, still in
-- the outbox or re-emitted by a recovery, have none, and their records simply carry no header.
alter table outbox add column ce_dataschema text;
