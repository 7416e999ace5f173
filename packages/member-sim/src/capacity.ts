import { bytesOf, cpuMillis } from "./quantity.js";

/** An amount of the resources the simulator schedules on. */
export interface Resources {
  cpuMillis: number;
  memoryBytes: number;
  pods: number;
}

/** What one pod asks for. */
export interface PodRequest {
  cpuMillis: number;
  memoryBytes: number;
}

export interface NodeCapacity {
  name: string;
  allocatable: Resources;
  /** A cordoned node takes no new pods. */
  unschedulable?: boolean;
}

/** A pod as the scheduler and the summary see it. */
export interface PodUsage extends PodRequest {
  nodeName?: string;
  /** Succeeded and Failed pods hold nothing. */
  terminal?: boolean;
}

export const zero = (): Resources => ({ cpuMillis: 0, memoryBytes: 0, pods: 0 });

interface ContainerLike {
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
}
interface PodSpecLike {
  containers?: ContainerLike[];
  initContainers?: ContainerLike[];
}

function containerRequest(c: ContainerLike): PodRequest {
  // Kubernetes defaults a missing request to the limit.
  const pick = (k: string) => c.resources?.requests?.[k] ?? c.resources?.limits?.[k];
  const cpu = pick("cpu");
  const mem = pick("memory");
  return {
    cpuMillis: cpu === undefined || cpu === null ? 0 : cpuMillis(cpu as string | number),
    memoryBytes: mem === undefined || mem === null ? 0 : bytesOf(mem as string | number),
  };
}

/**
 * The requests of a pod spec: the sum over its containers, or the largest init container
 * when that is bigger (init containers run one at a time before the others).
 */
export function podRequests(spec: PodSpecLike | undefined): PodRequest {
  const out: PodRequest = { cpuMillis: 0, memoryBytes: 0 };
  for (const c of spec?.containers ?? []) {
    const r = containerRequest(c);
    out.cpuMillis += r.cpuMillis;
    out.memoryBytes += r.memoryBytes;
  }
  for (const c of spec?.initContainers ?? []) {
    const r = containerRequest(c);
    out.cpuMillis = Math.max(out.cpuMillis, r.cpuMillis);
    out.memoryBytes = Math.max(out.memoryBytes, r.memoryBytes);
  }
  return out;
}

export function fits(free: Resources, req: PodRequest): boolean {
  return free.pods >= 1 && free.cpuMillis >= req.cpuMillis && free.memoryBytes >= req.memoryBytes;
}

/** Free resources per node after the bound, non-terminal pods. Pods on unknown nodes are ignored. */
export function freeByNode(nodes: NodeCapacity[], pods: Iterable<PodUsage>): Map<string, Resources> {
  const free = new Map<string, Resources>(nodes.map((n) => [n.name, { ...n.allocatable }]));
  for (const p of pods) {
    if (p.terminal || !p.nodeName) continue;
    const f = free.get(p.nodeName);
    if (!f) continue;
    f.cpuMillis -= p.cpuMillis;
    f.memoryBytes -= p.memoryBytes;
    f.pods -= 1;
  }
  return free;
}

/**
 * Picks the node for one pod, like the default scheduler's LeastAllocated score: the node left
 * with the largest free share of cpu and memory wins, the first such node on a tie.
 * Returns undefined when no node fits.
 */
export function chooseNode(nodes: NodeCapacity[], free: Map<string, Resources>, req: PodRequest): string | undefined {
  let best: string | undefined;
  let bestScore = -Infinity;
  for (const n of nodes) {
    const f = free.get(n.name);
    if (!f || n.unschedulable || !fits(f, req)) continue;
    const share = (left: number, total: number) => (total > 0 ? left / total : 0);
    const score =
      share(f.cpuMillis - req.cpuMillis, n.allocatable.cpuMillis) + share(f.memoryBytes - req.memoryBytes, n.allocatable.memoryBytes);
    if (score > bestScore) {
      best = n.name;
      bestScore = score;
    }
  }
  return best;
}

/**
 * Places pods in order on the nodes, taking each placed pod's requests off `free` (which is updated).
 * Returns the chosen node name per pod, or undefined for a pod that stays pending.
 */
export function placePods(nodes: NodeCapacity[], free: Map<string, Resources>, pods: PodRequest[]): (string | undefined)[] {
  return pods.map((req) => {
    const name = chooseNode(nodes, free, req);
    if (name) {
      const f = free.get(name)!;
      f.cpuMillis -= req.cpuMillis;
      f.memoryBytes -= req.memoryBytes;
      f.pods -= 1;
    }
    return name;
  });
}

/** The scheduler's message for a pod no node can take, e.g. "0/2 nodes are available: 2 Insufficient cpu." */
export function unschedulableMessage(nodes: NodeCapacity[], free: Map<string, Resources>, req: PodRequest): string {
  const counts = new Map<string, number>();
  const add = (reason: string) => counts.set(reason, (counts.get(reason) ?? 0) + 1);
  for (const n of nodes) {
    const f = free.get(n.name) ?? zero();
    if (n.unschedulable) add("node(s) were unschedulable");
    if (f.pods < 1) add("Too many pods");
    if (f.cpuMillis < req.cpuMillis) add("Insufficient cpu");
    if (f.memoryBytes < req.memoryBytes) add("Insufficient memory");
  }
  const reasons = [...counts.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([r, c]) => `${c} ${r}`);
  return `0/${nodes.length} nodes are available: ${reasons.join(", ")}.`;
}

/**
 * A Karmada-style resource summary: allocatable from the nodes, allocated from the bound
 * non-terminal pods, allocating from the pods not bound yet.
 */
export function summarize(nodes: NodeCapacity[], pods: Iterable<PodUsage>): { allocatable: Resources; allocated: Resources; allocating: Resources } {
  const allocatable = zero();
  for (const n of nodes) {
    allocatable.cpuMillis += n.allocatable.cpuMillis;
    allocatable.memoryBytes += n.allocatable.memoryBytes;
    allocatable.pods += n.allocatable.pods;
  }
  const allocated = zero();
  const allocating = zero();
  for (const p of pods) {
    if (p.terminal) continue;
    const into = p.nodeName ? allocated : allocating;
    into.cpuMillis += p.cpuMillis;
    into.memoryBytes += p.memoryBytes;
    into.pods += 1;
  }
  return { allocatable, allocated, allocating };
}
