package printer

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// VersionReport is what `istioctl version` prints, in every output format: the client's
// build and, when asked, the cluster's versions.
type VersionReport struct {
	Client version.Info `json:"clientVersion"`
	action.ClusterVersions
}

// Version prints a version report as JSON, YAML or text (short: the version numbers only);
// remote says the report holds the cluster's part, asked in namespace ns.
func Version(w io.Writer, rep *VersionReport, f Format, short, remote bool, ns string) error {
	switch f {
	case JSON:
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	case YAML:
		b, err := yaml.Marshal(rep)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
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
