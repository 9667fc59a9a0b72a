package printer

import (
	"fmt"
	"io"

	"github.com/istioctl-installer/istioctl/operator/revision"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// VersionReport is what `istioctl version` prints, in every output format: the client's
// build and, when asked, the cluster's versions.
type VersionReport struct {
	Client        version.Info            `json:"clientVersion"`
	Kubernetes    string                  `json:"kubernetesVersion,omitempty"`
	ControlPlanes []revision.ControlPlane `json:"controlPlanes,omitempty"`
}

// Version prints a version report as JSON, YAML or text (short: the version numbers only);
// remote says the report holds the cluster's part, asked in namespace ns.
func Version(w io.Writer, rep *VersionReport, f Format, short, remote bool, ns string) error {
	if f == JSON {
		return encode(w, f, rep, encoding{})
	}
	if f == YAML {
		if err := encode(w, f, rep, encoding{}); err != nil {
			return err
		}
		// Upstream's version ends its YAML with an empty line; scripts may compare.
		_, err := fmt.Fprintln(w)
		return err
	}
	if short {
		fmt.Fprintf(w, "client version: %s\n", rep.Client.Version)
	} else {
		fmt.Fprintf(w, "client version: %s\n", rep.Client)
	}
	if !remote {
		return nil
	}
	fmt.Fprintf(w, "kubernetes version: %s\n", rep.Kubernetes)
	if len(rep.ControlPlanes) == 0 {
		fmt.Fprintf(w, "control plane version: none (no istiod Deployment in namespace %s)\n", ns)
		return nil
	}
	for _, cp := range rep.ControlPlanes {
		fmt.Fprintf(w, "control plane version: %s (revision %s, %s/%s, ready %s)\n", cp.Version, cp.Revision, cp.Namespace, cp.Name, cp.Ready)
	}
	return nil
}
