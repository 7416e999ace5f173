-- Placement history: every change of a binding's `spec.clusters` (ResourceBinding and
-- ClusterResourceBinding alike) is kept as a row, written by a trigger in the transaction of the
-- write that made it, so no writer can change a placement without it being recorded. The row
-- holds the facts the write carried: the clusters before and after, who wrote (the
-- `flotilla.actor` setting of the write, see flotilla_write_batch below), and what the write
-- said about why (`cause`): the graceful-eviction tasks it added or removed (their reason,
-- producer and message), and the scheduler's decision when it wrote the status together with
-- the placement (the diagnosis's trigger and result, the Scheduled condition). The reading side
-- (the gateway) names the trigger and reason from them. Rows go with their binding (by uid) and
-- are pruned by age and count per binding (PLACEMENT_HISTORY_RETENTION, _MAX_ENTRIES).
CREATE TABLE placement_history (
  id            bigserial   PRIMARY KEY,
  gk            text        NOT NULL,
  namespace     text        NOT NULL,
  name          text        NOT NULL,
  uid           uuid        NOT NULL,
  rv            bigint      NOT NULL,              -- the binding's resourceVersion after the change
  at            timestamptz NOT NULL DEFAULT now(),
  actor         text,                              -- e.g. service:scheduler, user:alice; NULL when the writer did not say
  old_clusters  jsonb       NOT NULL,
  new_clusters  jsonb       NOT NULL,
  cause         jsonb       NOT NULL
);
CREATE INDEX placement_history_binding ON placement_history (uid, id);
CREATE INDEX placement_history_at ON placement_history (at);

CREATE FUNCTION flotilla_placement_history() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  old_spec jsonb := CASE WHEN TG_OP = 'UPDATE' THEN OLD.body -> 'spec' END;
  old_status jsonb := CASE WHEN TG_OP = 'UPDATE' THEN OLD.body -> 'status' END;
  new_spec jsonb := NEW.body -> 'spec';
  new_status jsonb := NEW.body -> 'status';
  old_tasks jsonb := coalesce(old_spec -> 'gracefulEvictionTasks', '[]'::jsonb);
  new_tasks jsonb := coalesce(new_spec -> 'gracefulEvictionTasks', '[]'::jsonb);
  diagnosis jsonb;
  scheduled jsonb;
BEGIN
  -- the scheduler writes its decision (status) and the placement in one write: a status that
  -- changed with the placement is the decision that made it; a spec-only write keeps the old one
  IF new_status IS DISTINCT FROM old_status THEN
    diagnosis := new_status -> 'schedulingDiagnosis';
    IF diagnosis IS NOT NULL THEN
      diagnosis := jsonb_strip_nulls(jsonb_build_object('trigger', diagnosis -> 'trigger', 'result', diagnosis -> 'result', 'time', diagnosis -> 'time'));
    END IF;
    SELECT c INTO scheduled FROM jsonb_array_elements(coalesce(new_status -> 'conditions', '[]'::jsonb)) c WHERE c ->> 'type' = 'Scheduled' LIMIT 1;
  END IF;
  INSERT INTO placement_history (gk, namespace, name, uid, rv, actor, old_clusters, new_clusters, cause)
  VALUES (NEW.gk, NEW.namespace, NEW.name, NEW.uid, NEW.rv, nullif(current_setting('flotilla.actor', true), ''),
    coalesce(old_spec -> 'clusters', '[]'::jsonb), coalesce(new_spec -> 'clusters', '[]'::jsonb),
    jsonb_strip_nulls(jsonb_build_object(
      -- tasks are told apart by the cluster they evict from (a task may be rewritten in place)
      'addedTasks', (SELECT jsonb_agg(t) FROM jsonb_array_elements(new_tasks) t
                     WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(old_tasks) o WHERE o ->> 'fromCluster' = t ->> 'fromCluster')),
      'removedTasks', (SELECT jsonb_agg(t) FROM jsonb_array_elements(old_tasks) t
                       WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(new_tasks) n WHERE n ->> 'fromCluster' = t ->> 'fromCluster')),
      'diagnosis', diagnosis,
      'scheduled', CASE WHEN scheduled IS NOT NULL THEN jsonb_strip_nulls(jsonb_build_object('status', scheduled -> 'status', 'reason', scheduled -> 'reason', 'message', scheduled -> 'message')) END)));
  RETURN NULL;
END $$;

CREATE FUNCTION flotilla_placement_history_forget() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM placement_history WHERE uid = OLD.uid;
  RETURN NULL;
END $$;

CREATE TRIGGER objects_placement_history_insert AFTER INSERT ON objects FOR EACH ROW
  WHEN (NEW.gk IN ('work.karmada.io/ResourceBinding', 'work.karmada.io/ClusterResourceBinding')
        AND jsonb_array_length(coalesce(NEW.body -> 'spec' -> 'clusters', '[]'::jsonb)) > 0)
  EXECUTE FUNCTION flotilla_placement_history();

-- an absent list and an empty one are the same placement
CREATE TRIGGER objects_placement_history_update AFTER UPDATE ON objects FOR EACH ROW
  WHEN (NEW.gk IN ('work.karmada.io/ResourceBinding', 'work.karmada.io/ClusterResourceBinding')
        AND coalesce(OLD.body -> 'spec' -> 'clusters', '[]'::jsonb) IS DISTINCT FROM coalesce(NEW.body -> 'spec' -> 'clusters', '[]'::jsonb))
  EXECUTE FUNCTION flotilla_placement_history();

CREATE TRIGGER objects_placement_history_delete AFTER DELETE ON objects FOR EACH ROW
  WHEN (OLD.gk IN ('work.karmada.io/ResourceBinding', 'work.karmada.io/ClusterResourceBinding'))
  EXECUTE FUNCTION flotilla_placement_history_forget();

-- Who writes: a write that names an actor (`actor` in its op: the service, or the gateway's
-- authenticated user) sets `flotilla.actor` for its own part of the batch only. Otherwise as
-- migration 008.
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
    i := k;
    code := r.code;
    rv := r.rv;
    body := r.body;
    RETURN NEXT;
    k := k + 1;
  END LOOP;
END $$;
