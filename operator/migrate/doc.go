// Package migrate moves a mesh's workloads from one control plane revision to another:
// the plan (which revision tags move, which namespaces are relabelled, which workloads
// restart, in which batches), the restart of a batch by the pod-template restart
// annotation written with this package's field manager, the gate that holds the next batch
// until every pod of the batch is Ready (operator/readiness's rules) and injected by the
// new revision, and the progress record (a ConfigMap in the istio namespace) that lets the
// same command resume and --rollback undo, each entry of it checked against the cluster
// before it is acted on (validate.go). It never prints and never reads flags: it reports
// batches and the entries it skips as typed events.
package migrate
