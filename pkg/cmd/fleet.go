package cmd

import (
	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/spec"
)

// newFleetCommand is x fleet: the commands of a fleet file, one spec for a mesh across
// several clusters (docs/fleet.md).
// fleetFileUsage is the fleet commands' -f.
const fleetFileUsage = "The fleet file (- reads standard input)"

// fleetExample is a fleet file to start from; the examples call it fleet.yaml.
const fleetExample = spec.DocsURL + "examples/fleet-3-clusters.yaml"

func newFleetCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Install, check and remove a fleet: one spec for a mesh across several clusters",
		Long: `A fleet file (kind Fleet, apiVersion fleet.istioctl-installer.github.io/v1alpha1: this
istioctl's own, not upstream's) lists the clusters of one mesh by kubeconfig context, each with
its name, network and role (primary, remote of a named primary, config or external), the
mesh ID, the trust source, one IstioOperator spec for all and an overlay per cluster. See
` + spec.DocsURL + `fleet.md, and an example: ` + fleetExample + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newFleetDumpCommand(g), newFleetCheckCommand(g, "precheck"), newFleetCheckCommand(g, "verify"),
		newFleetWriteCommand(g, "install"), newFleetWriteCommand(g, "uninstall"))
	return cmd
}
