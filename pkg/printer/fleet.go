package printer

import (
	"fmt"
	"io"

	"github.com/istioctl-installer/istioctl/operator/fleet"
)

// FleetDump prints fleet dump's result as YAML (with a line saying what it is) or JSON.
func FleetDump(w io.Writer, d *fleet.Dump, f Format) error {
	if f != JSON {
		f = YAML
		fmt.Fprintf(w, "# fleet %s, mesh %s: %d clusters, %d links; what each cluster gets, nothing applied\n", d.Fleet, d.MeshID, len(d.Clusters), len(d.Links))
	}
	return encode(w, f, d, encoding{ordered: true})
}
