// Package skew holds Istio's version-skew rules as data, each naming its source, and the
// facts of each release they need (Kubernetes window, Gateway API minimum, the behaviour
// changes compatibilityVersion gates), with the functions that apply them to versions.
// It reads no cluster: precheck, revision list and the upgrades ask it about the versions
// they found.
package skew
