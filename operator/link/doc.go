// Package link owns the links between clusters of a multi-cluster mesh: the Secrets
// istiod reads to watch another cluster's apiserver (upstream's create-remote-secret
// format: one kubeconfig per cluster ID), the reader identity and token they carry, and
// what can be proved about each from here without istiod: that it decodes, that its auth
// method is one istiod accepts, that it authenticates, what it may read and which cluster
// it reaches. It also asks istiod itself (/debug/clusterz) when istiod can be reached.
//
// No function of this package returns or formats a token: a Link's kubeconfig is kept
// for building clients and never leaves the package in a message.
package link
