// Package rollout replaces the pods of a node DaemonSet (CNI, ztunnel) node batch by node
// batch, for an in-place upgrade: the DaemonSet is applied with updateStrategy OnDelete (its
// controller then replaces no pod by itself), the old pods of a batch of nodes are deleted,
// each node's new pod must become Ready (the readiness rules judge it; a permanent cause
// fails at once) before the next batch, and the first node whose pod does not stops the
// rollout, naming the node and the cause. Nodes whose pod already runs the newest template
// are skipped, so running the same upgrade again continues where it stopped. The caller
// applies the DaemonSet as rendered at the end, which restores its own update strategy.
package rollout
