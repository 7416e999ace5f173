-- One round trip per write: the object store computes the new object in the application and
-- hands it here, where the per-object lock, the resourceVersion (the transaction id, taken
-- after the lock so an object's versions grow in commit order), the optimistic check against
-- the version the caller read, the row, the outbox row and cascading deletes all happen in
-- one statement. The NOTIFY that wakes the relay and watches is sent by the writer after the
-- commit, in its own statement: a NOTIFY inside the write would serialize every commit.

CREATE FUNCTION flotilla_lock(p_gk text, p_ns text, p_name text) RETURNS void
LANGUAGE sql AS $$ SELECT pg_advisory_xact_lock(hashtextextended(p_gk || '|' || p_ns || '|' || p_name, 0)) $$;

-- Deletes, or marks deleting when they have finalizers, every object owned by p_uid, recursively.
CREATE FUNCTION flotilla_cascade(p_uid text, p_rv bigint, p_now text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  r record;
  c record;
  nb jsonb;
BEGIN
  FOR r IN SELECT o.gk, o.namespace, o.name FROM objects o WHERE o.index_keys @> ARRAY['owner:' || p_uid] LOOP
    PERFORM flotilla_lock(r.gk, r.namespace, r.name);
    SELECT o.rv, o.deleting, o.body, o.uid INTO c FROM objects o WHERE o.gk = r.gk AND o.namespace = r.namespace AND o.name = r.name;
    IF NOT FOUND THEN CONTINUE; END IF;
    IF c.rv > p_rv THEN
      -- written by a newer transaction: this one's resourceVersion would go backwards; retry
      RAISE EXCEPTION 'resourceVersion order' USING ERRCODE = 'FL001';
    END IF;
    IF jsonb_array_length(coalesce(c.body -> 'metadata' -> 'finalizers', '[]'::jsonb)) > 0 THEN
      IF c.deleting THEN CONTINUE; END IF;
      nb := jsonb_set(jsonb_set(jsonb_set(c.body, '{metadata,deletionTimestamp}', to_jsonb(p_now)),
              '{metadata,deletionGracePeriodSeconds}', '0'::jsonb), '{metadata,resourceVersion}', to_jsonb(p_rv::text));
      UPDATE objects SET rv = p_rv, deleting = true, body = nb WHERE gk = r.gk AND namespace = r.namespace AND name = r.name;
      INSERT INTO outbox (rv, gk, namespace, name, uid, type, object) VALUES (p_rv, r.gk, r.namespace, r.name, c.uid, 'MODIFIED', nb);
    ELSE
      nb := jsonb_set(c.body, '{metadata,resourceVersion}', to_jsonb(p_rv::text));
      DELETE FROM objects WHERE gk = r.gk AND namespace = r.namespace AND name = r.name;
      INSERT INTO outbox (rv, gk, namespace, name, uid, type, object) VALUES (p_rv, r.gk, r.namespace, r.name, c.uid, 'DELETED', nb);
      PERFORM flotilla_cascade(c.uid::text, p_rv, p_now);
    END IF;
  END LOOP;
END $$;

-- p_op: 'create' (the name must be free), 'update' or 'remove' (the stored resourceVersion must
-- equal p_expected_rv). Returns code ok | exists | notfound | conflict, and the stored object.
CREATE FUNCTION flotilla_write(p_op text, p_gk text, p_ns text, p_name text, p_expected_rv bigint,
                               p_body jsonb, p_index text[], p_now text)
RETURNS TABLE (code text, rv text, body jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  v_rv bigint;
  v_cur bigint;
  v_body jsonb;
  v_uid uuid := (p_body -> 'metadata' ->> 'uid')::uuid;
BEGIN
  PERFORM flotilla_lock(p_gk, p_ns, p_name);
  v_rv := pg_current_xact_id()::text::bigint;
  -- a new statement, so a new snapshot: it sees the commit of whoever held the lock before
  SELECT o.rv INTO v_cur FROM objects o WHERE o.gk = p_gk AND o.namespace = p_ns AND o.name = p_name;
  IF p_op = 'create' THEN
    IF FOUND THEN RETURN QUERY SELECT 'exists'::text, v_cur::text, NULL::jsonb; RETURN; END IF;
  ELSE
    IF NOT FOUND THEN RETURN QUERY SELECT 'notfound'::text, NULL::text, NULL::jsonb; RETURN; END IF;
    IF v_cur <> p_expected_rv THEN RETURN QUERY SELECT 'conflict'::text, v_cur::text, NULL::jsonb; RETURN; END IF;
  END IF;
  v_body := jsonb_set(p_body, '{metadata,resourceVersion}', to_jsonb(v_rv::text));
  IF p_op = 'create' THEN
    INSERT INTO objects (gk, namespace, name, uid, rv, generation, labels, index_keys, deleting, body)
    VALUES (p_gk, p_ns, p_name, v_uid, v_rv, coalesce((v_body -> 'metadata' ->> 'generation')::int, 1),
            coalesce(v_body -> 'metadata' -> 'labels', '{}'::jsonb), p_index, false, v_body);
    INSERT INTO outbox (rv, gk, namespace, name, uid, type, object) VALUES (v_rv, p_gk, p_ns, p_name, v_uid, 'ADDED', v_body);
  ELSIF p_op = 'update' THEN
    UPDATE objects SET rv = v_rv, generation = coalesce((v_body -> 'metadata' ->> 'generation')::int, 1),
           labels = coalesce(v_body -> 'metadata' -> 'labels', '{}'::jsonb), index_keys = p_index,
           deleting = (v_body -> 'metadata' -> 'deletionTimestamp') IS NOT NULL, body = v_body
    WHERE gk = p_gk AND namespace = p_ns AND name = p_name;
    INSERT INTO outbox (rv, gk, namespace, name, uid, type, object) VALUES (v_rv, p_gk, p_ns, p_name, v_uid, 'MODIFIED', v_body);
  ELSIF p_op = 'remove' THEN
    DELETE FROM objects WHERE gk = p_gk AND namespace = p_ns AND name = p_name;
    INSERT INTO outbox (rv, gk, namespace, name, uid, type, object) VALUES (v_rv, p_gk, p_ns, p_name, v_uid, 'DELETED', v_body);
    PERFORM flotilla_cascade(v_uid::text, v_rv, p_now);
  ELSE
    RAISE EXCEPTION 'unknown operation %', p_op;
  END IF;
  RETURN QUERY SELECT 'ok'::text, v_rv::text, v_body;
END $$;
