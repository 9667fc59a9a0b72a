package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newUpgradeCommand is upgrade: install's flags and run (in place, with --node-batch), and
// --strategy revision (upgraderevision.go).
func newUpgradeCommand(g *Globals) *cobra.Command {
	cmd, a := installCommand(g, "upgrade")
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
