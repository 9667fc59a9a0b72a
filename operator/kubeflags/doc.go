// Package kubeflags owns how istioctl finds and authenticates to a cluster: kubectl's
// connection flags (--kubeconfig, --context, --server, --token, ...) and upstream istioctl's
// (-c, --kubeclient-timeout), turned into client-go's kubeconfig loading rules and
// overrides. It builds no clients and never contacts the cluster, so the command layer may
// hold it without reaching the engine.
package kubeflags
