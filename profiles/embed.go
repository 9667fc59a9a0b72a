// Package profiles embeds the built-in install profiles (IstioOperator YAML files); a
// --manifests directory's profiles/ replaces them.
package profiles

import "embed"

// FS holds <name>.yaml for each built-in profile.
//
//go:embed *.yaml
var FS embed.FS
