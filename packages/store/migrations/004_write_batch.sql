-- Many writes in one statement and one transaction: the object store gathers the writes its
-- callers make at about the same time and sends them together (one commit, one WAL flush, one
-- round trip for all). Each write keeps its own lock, its own expected-resourceVersion check and
-- its own outbox row; one that does not pass its check does not stop the others. They share the
-- transaction's id as resourceVersion. Writes to the same object keep their order.
--
-- Writes decided where the row is: an update or a delete no longer needs the object read into
-- the application first. The caller sends what it wants (the object, and which part it owns:
-- spec, status or all) and the version it read; under the row's lock the database keeps what
-- the server owns (uid, creationTimestamp, deletionTimestamp, generation, generateName, and the
-- status or the rest of the object), steps the generation when the desired state changed,
-- answers `unchanged` without writing when nothing would change, and removes an object being
-- deleted once its last finalizer goes.
--
-- A batch takes every object's lock first, then the transaction id, so the resourceVersion it
-- writes is newer than that of every earlier writer of those objects (each one's id was taken
-- before it committed, which is before this batch got the lock). Cascaded deletes still check.

-- The wake-up of each write carries the object's index entries as a hint (see events.proto).
ALTER TABLE outbox ADD COLUMN index_keys text[];

-- What `generation` tracks: the spec, or for spec-less kinds every top-level field but metadata and status.
CREATE FUNCTION flotilla_desired(b jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN b ? 'spec' THEN b -> 'spec' ELSE b - 'metadata' - 'status' - 'resourceVersion' END $$;

-- One write, its object already locked; v_rv is the batch's resourceVersion.
-- op: {op: create|update|delete, part: spec|status|all (update), gk, ns, name, rv (expected or null),
--      uid (precondition or null), body, index (array), now}.
-- code: ok | unchanged | exists | notfound | conflict | uid (the uid precondition failed).
CREATE FUNCTION flotilla_apply(v_rv bigint, op jsonb, OUT code text, OUT rv text, OUT body jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  p_op text := op ->> 'op';
  p_part text := coalesce(op ->> 'part', 'spec');
  p_gk text := op ->> 'gk';
  p_ns text := op ->> 'ns';
  p_name text := op ->> 'name';
  p_expected bigint := (op ->> 'rv')::bigint;
  p_uid text := op ->> 'uid';
  p_now text := op ->> 'now';
  p_index text[] := ARRAY(SELECT jsonb_array_elements_text(coalesce(op -> 'index', '[]'::jsonb)));
  c record;
  cm jsonb;
  nb jsonb;
  remove boolean := false;
BEGIN
  SELECT o.rv, o.body, o.uid, o.index_keys INTO c FROM objects o WHERE o.gk = p_gk AND o.namespace = p_ns AND o.name = p_name;
  IF p_op = 'create' THEN
    IF FOUND THEN code := 'exists'; rv := c.rv::text; body := NULL; RETURN; END IF;
    nb := jsonb_set(op -> 'body', '{metadata,resourceVersion}', to_jsonb(v_rv::text));
    INSERT INTO objects (gk, namespace, name, uid, rv, generation, labels, index_keys, deleting, body)
    VALUES (p_gk, p_ns, p_name, (nb -> 'metadata' ->> 'uid')::uuid, v_rv, coalesce((nb -> 'metadata' ->> 'generation')::int, 1),
            coalesce(nb -> 'metadata' -> 'labels', '{}'::jsonb), p_index, false, nb);
    INSERT INTO outbox (rv, gk, namespace, name, uid, type, object, index_keys) VALUES (v_rv, p_gk, p_ns, p_name, (nb -> 'metadata' ->> 'uid')::uuid, 'ADDED', nb, p_index);
    code := 'ok'; rv := v_rv::text; body := nb; RETURN;
  END IF;

  IF NOT FOUND THEN code := 'notfound'; rv := NULL; body := NULL; RETURN; END IF;
  IF c.rv > v_rv THEN RAISE EXCEPTION 'resourceVersion order' USING ERRCODE = 'FL001'; END IF;
  IF p_expected IS NOT NULL AND c.rv <> p_expected THEN code := 'conflict'; rv := c.rv::text; body := NULL; RETURN; END IF;
  IF p_uid IS NOT NULL AND p_uid <> c.uid::text THEN code := 'uid'; rv := c.rv::text; body := c.body; RETURN; END IF;
  cm := c.body -> 'metadata';

  IF p_op = 'delete' THEN
    IF jsonb_array_length(coalesce(cm -> 'finalizers', '[]'::jsonb)) > 0 THEN
      IF cm ? 'deletionTimestamp' THEN code := 'unchanged'; rv := c.rv::text; body := c.body; RETURN; END IF;
      nb := jsonb_set(jsonb_set(c.body, '{metadata,deletionTimestamp}', to_jsonb(p_now)), '{metadata,deletionGracePeriodSeconds}', '0'::jsonb);
    ELSE
      nb := c.body;
      remove := true;
    END IF;
  ELSIF p_op = 'update' THEN
    IF p_part = 'status' THEN
      nb := CASE WHEN op -> 'body' ? 'status' THEN jsonb_set(c.body, '{status}', op -> 'body' -> 'status') ELSE c.body - 'status' END;
    ELSE
      nb := op -> 'body';
      -- what the server owns in metadata stays as stored
      nb := jsonb_set(nb, '{metadata}',
        ((nb -> 'metadata') - 'uid' - 'creationTimestamp' - 'deletionTimestamp' - 'deletionGracePeriodSeconds' - 'generation' - 'generateName')
        || jsonb_strip_nulls(jsonb_build_object('uid', cm -> 'uid', 'creationTimestamp', cm -> 'creationTimestamp',
             'deletionTimestamp', cm -> 'deletionTimestamp', 'deletionGracePeriodSeconds', cm -> 'deletionGracePeriodSeconds',
             'generation', cm -> 'generation', 'generateName', cm -> 'generateName')));
      IF p_part = 'spec' THEN
        nb := CASE WHEN c.body ? 'status' THEN jsonb_set(nb, '{status}', c.body -> 'status') ELSE nb - 'status' END;
      END IF;
      IF flotilla_desired(nb) IS DISTINCT FROM flotilla_desired(c.body) THEN
        nb := jsonb_set(nb, '{metadata,generation}', to_jsonb(coalesce((cm ->> 'generation')::int, 1) + 1));
      END IF;
    END IF;
    IF (nb #- '{metadata,resourceVersion}' #- '{metadata,managedFields}') = (c.body #- '{metadata,resourceVersion}' #- '{metadata,managedFields}') THEN
      code := 'unchanged'; rv := c.rv::text; body := c.body; RETURN;
    END IF;
    remove := cm ? 'deletionTimestamp' AND jsonb_array_length(coalesce(nb -> 'metadata' -> 'finalizers', '[]'::jsonb)) = 0;
  ELSE
    RAISE EXCEPTION 'unknown operation %', p_op;
  END IF;

  nb := jsonb_set(nb, '{metadata,resourceVersion}', to_jsonb(v_rv::text));
  IF remove THEN
    DELETE FROM objects WHERE gk = p_gk AND namespace = p_ns AND name = p_name;
    INSERT INTO outbox (rv, gk, namespace, name, uid, type, object, index_keys) VALUES (v_rv, p_gk, p_ns, p_name, c.uid, 'DELETED', nb, c.index_keys);
    PERFORM flotilla_cascade(c.uid::text, v_rv, p_now);
  ELSE
    -- a status write or a delete cannot change what the indexes are computed from
    IF NOT (p_op = 'update' AND p_part <> 'status') THEN p_index := c.index_keys; END IF;
    UPDATE objects SET rv = v_rv, generation = coalesce((nb -> 'metadata' ->> 'generation')::int, 1),
           labels = coalesce(nb -> 'metadata' -> 'labels', '{}'::jsonb), index_keys = p_index,
           deleting = (nb -> 'metadata' -> 'deletionTimestamp') IS NOT NULL, body = nb
    WHERE gk = p_gk AND namespace = p_ns AND name = p_name;
    INSERT INTO outbox (rv, gk, namespace, name, uid, type, object, index_keys) VALUES (v_rv, p_gk, p_ns, p_name, c.uid, 'MODIFIED', nb, p_index);
  END IF;
  code := 'ok';
  rv := v_rv::text;
  body := nb;
END $$;

CREATE FUNCTION flotilla_write_batch(p_ops jsonb)
RETURNS TABLE (i int, code text, rv text, body jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  op jsonb;
  r record;
  k int := 0;
  v_rv bigint;
BEGIN
  FOR op IN SELECT value FROM jsonb_array_elements(p_ops) LOOP
    PERFORM flotilla_lock(op ->> 'gk', op ->> 'ns', op ->> 'name');
  END LOOP;
  v_rv := pg_current_xact_id()::text::bigint;
  FOR op IN SELECT value FROM jsonb_array_elements(p_ops) LOOP
    r := flotilla_apply(v_rv, op);
    i := k;
    code := r.code;
    rv := r.rv;
    body := r.body;
    RETURN NEXT;
    k := k + 1;
  END LOOP;
END $$;

DROP FUNCTION flotilla_write(text, text, text, text, bigint, jsonb, text[], text);
