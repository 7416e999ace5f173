-- The write wakes the relay and the watches itself: a NOTIFY on `flotilla_outbox` in the
-- batch's own transaction, delivered when it commits, instead of a statement (and a transaction,
-- and a transaction id) of its own after it. Its payload says what the batch wrote,
-- `<resourceVersion> <group/Kind>,<group/Kind>…`, so that a watch of other kinds need not poll
-- (`*` for any kind: a delete, or a write of an object being deleted, may cascade to its
-- dependents, whatever their kind). Otherwise as migration 010.
CREATE OR REPLACE FUNCTION flotilla_write_batch(p_ops jsonb)
RETURNS TABLE (i int, code text, rv text, body jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  op jsonb;
  r record;
  k int := 0;
  v_rv bigint;
  v_traced boolean := false;
  v_actor text := '';
  v_wrote boolean := false;
  v_kinds text[] := '{}';
  v_any boolean := false;
BEGIN
  FOR op IN SELECT value FROM jsonb_array_elements(p_ops) LOOP
    PERFORM flotilla_lock(op ->> 'gk', op ->> 'ns', op ->> 'name');
  END LOOP;
  v_rv := pg_current_xact_id()::text::bigint;
  PERFORM set_config('flotilla.actor', '', true);
  FOR op IN SELECT value FROM jsonb_array_elements(p_ops) LOOP
    IF op ? 'trace' THEN
      PERFORM set_config('flotilla.trace_context', op ->> 'trace', true);
      v_traced := true;
    ELSIF v_traced THEN
      PERFORM set_config('flotilla.trace_context', '', true);
      v_traced := false;
    END IF;
    IF coalesce(op ->> 'actor', '') <> v_actor THEN
      v_actor := coalesce(op ->> 'actor', '');
      PERFORM set_config('flotilla.actor', v_actor, true);
    END IF;
    r := flotilla_apply(v_rv, op);
    IF r.code = 'ok' THEN
      v_wrote := true;
      IF op ->> 'op' = 'delete' OR (r.body -> 'metadata' ? 'deletionTimestamp') THEN
        v_any := true;
      ELSIF NOT (op ->> 'gk') = ANY(v_kinds) THEN
        v_kinds := v_kinds || (op ->> 'gk');
      END IF;
    END IF;
    i := k;
    code := r.code;
    rv := r.rv;
    body := r.body;
    RETURN NEXT;
    k := k + 1;
  END LOOP;
  IF v_wrote THEN
    PERFORM pg_notify('flotilla_outbox', v_rv::text || ' ' ||
      CASE WHEN v_any OR length(array_to_string(v_kinds, ',')) > 7000 THEN '*' ELSE array_to_string(v_kinds, ',') END);
  END IF;
END $$;
