// Package spec resolves an install spec: the default profile, the selected profile, the
// -f files and the --set flags, merged in that order into one IstioOperator tree, decoded
// strictly and validated before anything touches a cluster. It owns the --set grammar.
package spec
