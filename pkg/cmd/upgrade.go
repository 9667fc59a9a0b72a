package cmd

import "github.com/spf13/cobra"

// newUpgradeCommand is upgrade: install's flags and run (in place), and --strategy
// revision (upgraderevision.go).
func newUpgradeCommand(g *Globals) *cobra.Command {
	cmd, a := installCommand(g, "upgrade")
	return withRevisionStrategy(cmd, a)
}
