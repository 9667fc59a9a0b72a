// Package v1alpha1 holds the install.istio.io/v1alpha1 IstioOperator API: the spec types,
// the typed schema of the Helm values our charts read, and a strict YAML decoder that
// checks a document against them and names the file, line and field of every problem.
// It does no I/O and reads no charts: the one shape it takes from a chart (values.ztunnel's)
// is given by its caller (SetZtunnelDefaults; operator/spec gives the embedded chart's).
package v1alpha1
