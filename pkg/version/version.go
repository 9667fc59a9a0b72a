// Package version holds the build's identity, stamped by the Makefile with -ldflags.
package version

import (
	"fmt"
	"runtime"
)

// Stamped at build time (see Makefile: -X .../pkg/version.Version=...).
var (
	// Version is the Istio version this build installs by default and reports as the client
	// version: the version line (hack/istio-version.sh), stamped here by make generate.
	Version = "1.31.0"
	// GitRevision is the commit the binary was built from.
	GitRevision = "unknown"
	// BuildStatus is "Clean" or "Modified" (uncommitted changes at build time).
	BuildStatus = "unknown"
	// GitTag is the git tag (or description) of the commit the binary was built from.
	GitTag = "unknown"
	// DefaultHub is the registry images are pulled from unless the spec says otherwise.
	DefaultHub = "docker.io/istio"
)

// Info is the client half of `istioctl version`: upstream's fields, in its order.
type Info struct {
	Version     string `json:"version"`
	GitRevision string `json:"revision"`
	GoVersion   string `json:"golang_version"`
	BuildStatus string `json:"status"`
	GitTag      string `json:"tag"`
}

// Get returns the build's Info.
func Get() Info {
	return Info{
		Version:     Version,
		GitRevision: GitRevision,
		GoVersion:   runtime.Version(),
		BuildStatus: BuildStatus,
		GitTag:      GitTag,
	}
}

func (i Info) String() string {
	return fmt.Sprintf("version.BuildInfo{Version:%q, GitRevision:%q, GolangVersion:%q, BuildStatus:%q, GitTag:%q}",
		i.Version, i.GitRevision, i.GoVersion, i.BuildStatus, i.GitTag)
}
