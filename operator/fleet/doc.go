// Package fleet owns the fleet file: one spec for a mesh across several clusters (this
// project's own kind, not upstream's), decoded strictly with the file's lines, validated
// against itself and the kubeconfig's contexts, and what it derives without touching a
// cluster: the IstioOperator each cluster gets (its spec.Options, resolved by operator/spec)
// and the links, which link Secret goes into which cluster, with the fleet's ownership
// labels.
package fleet
