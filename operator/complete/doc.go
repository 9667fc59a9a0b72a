// Package complete answers shell completion: from the cluster (revisions, tags, install
// records, namespaces), the kubeconfig (contexts, clusters, users) and the built-in data
// (profiles, the --set paths of the spec). It never fails and never prints: what it cannot
// find within Timeout it leaves out, so a tab press on a cluster that does not answer
// offers nothing and returns at once.
package complete
