-- The trace context (W3C traceparent) of the write that made each outbox row, carried on its
-- wake-up so that the reconcile it wakes continues the caller's trace. A write that carries one
-- (`trace` in its op) sets it for its own outbox row only; NULL when tracing is off.
ALTER TABLE outbox ADD COLUMN trace_context text DEFAULT nullif(current_setting('flotilla.trace_context', true), '');

CREATE OR REPLACE FUNCTION flotilla_write_batch(p_ops jsonb)
RETURNS TABLE (i int, code text, rv text, body jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  op jsonb;
  r record;
  k int := 0;
  v_rv bigint;
  v_traced boolean := false;
BEGIN
  FOR op IN SELECT value FROM jsonb_array_elements(p_ops) LOOP
    PERFORM flotilla_lock(op ->> 'gk', op ->> 'ns', op ->> 'name');
  END LOOP;
  v_rv := pg_current_xact_id()::text::bigint;
  FOR op IN SELECT value FROM jsonb_array_elements(p_ops) LOOP
    IF op ? 'trace' THEN
      PERFORM set_config('flotilla.trace_context', op ->> 'trace', true);
      v_traced := true;
    ELSIF v_traced THEN
      PERFORM set_config('flotilla.trace_context', '', true);
      v_traced := false;
    END IF;
    r := flotilla_apply(v_rv, op);
    i := k;
    code := r.code;
    rv := r.rv;
    body := r.body;
    RETURN NEXT;
    k := k + 1;
  END LOOP;
END $$;
