package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newUpgradeCommand is upgrade: install's flags and run (in place, with --node-batch), and
// --strategy revision (upgraderevision.go).
func newUpgradeCommand(g *Globals) *cobra.Command {
	cmd, a := installCommand(g, "upgrade")
	cmd.Short = "Upgrade Istio in place (the control plane, then the node agents in batches), or beside the old one with --strategy revision"
	cmd.Example = `  # in place: the control plane, then CNI, then ztunnel two nodes at a time
  istioctl upgrade -y --node-batch 2

  # a new revision beside the old one, workloads moved in gated batches of 10
  istioctl upgrade --strategy revision --relabel --batch-size 10 -y

  # resume it after a failed batch, or take it back
  istioctl upgrade --strategy revision --relabel -y
  istioctl upgrade --strategy revision --rollback -y`
	return withRevisionStrategy(cmd, a)
}

// addUpgradeFlags adds upgrade's own flags to the install command it shares: an in-place
// upgrade replaces the pods of the node DaemonSets (CNI, ztunnel) NodeBatch nodes at a time.
func addUpgradeFlags(cmd *cobra.Command, a *InstallCommand) {
	cmd.Flags().IntVar(&a.NodeBatch, "node-batch", 1,
		"How many nodes at a time an in-place upgrade replaces the CNI and ztunnel pods on: each batch's new pods must be ready before the next, and the first node whose pod is not stops the upgrade")
}

// checkNodeBatch refuses a node batch below one.
func checkNodeBatch(n int) error {
	if n < 1 {
		return fmt.Errorf("--node-batch %d: at least one node at a time", n)
	}
	return nil
}
