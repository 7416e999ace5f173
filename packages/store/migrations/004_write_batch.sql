-- Many writes in one statement and one transaction: the object store gathers the writes its
-- callers make at about the same time and sends them together (one commit, one WAL flush, one
-- round trip for all). Each write keeps its own lock, its own expected-resourceVersion check and
-- its own outbox row; one that does not pass its check does not stop the others. They share the
-- transaction's id as resourceVersion. Writes to the same object keep their order.
--
-- p_ops: a JSON array of {op, gk, ns, name, rv (expected, or null), body, index (array), now}.
-- Returns one row per op, in order: i (0-based), code (ok | exists | notfound | conflict), rv, body.
CREATE FUNCTION flotilla_write_batch(p_ops jsonb)
RETURNS TABLE (i int, code text, rv text, body jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  op jsonb;
  r record;
  k int := 0;
BEGIN
  FOR op IN SELECT value FROM jsonb_array_elements(p_ops) LOOP
    SELECT * INTO r FROM flotilla_write(op ->> 'op', op ->> 'gk', op ->> 'ns', op ->> 'name', (op ->> 'rv')::bigint, op -> 'body',
      ARRAY(SELECT jsonb_array_elements_text(coalesce(op -> 'index', '[]'::jsonb))), op ->> 'now');
    i := k;
    code := r.code;
    rv := r.rv;
    body := r.body;
    RETURN NEXT;
    k := k + 1;
  END LOOP;
END $$;
