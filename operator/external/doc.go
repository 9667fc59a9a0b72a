// Package external says what a resolved install spec relies on but does not install: the
// control plane (declared in spec.external.controlPlane, or implied when the spec installs
// gateways but no istiod), a remote control plane, the certificate authority and Prometheus.
// It is pure: operator/existing finds those pieces in a cluster and operator/check checks
// them; the install leaves the relied-on components alone (never applies, prunes or
// uninstalls them).
package external
