// References that the tests of several services build the same way.
import type { ObjectRef } from "@flotilla/store";

export const clusterRef = (name: string): ObjectRef => ({ gk: "cluster.karmada.io/Cluster", namespace: "", name });
export const rbRef = (name: string, namespace = "default"): ObjectRef => ({ gk: "work.karmada.io/ResourceBinding", namespace, name });
