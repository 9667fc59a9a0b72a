package v1alpha1

import (
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// MaxNodes bounds the YAML nodes one input file may expand to, everything decoded from it
// together (a fleet file's shared spec and every cluster's overlay): YAML aliases cannot
// blow a small file up exponentially ("billion laughs"), neither once nor once per part.
const MaxNodes = 1 << 20

// Budget is what is left of one input file's MaxNodes. One is made per file; every decode
// of a part of the file spends from it.
type Budget struct {
	source string
	left   int
	over   bool // the problem was given
}

// NewBudget is the budget of the input file source (named in the problem it gives).
func NewBudget(source string) *Budget { return &Budget{source: source, left: MaxNodes} }

// Spend takes one node, n at path, from the budget. It is false once the file has expanded
// past MaxNodes; the first call past it adds the problem that says so, at n, to ps.
func (b *Budget) Spend(n *yaml.Node, path string, ps *Problems) bool {
	if b.left > 0 {
		b.left--
		return true
	}
	if !b.over {
		b.over = true
		*ps = append(*ps, Problem{Source: b.source, Line: n.Line, Path: path, Msg: fmt.Sprintf(
			"the file expands to more than %d YAML nodes, the limit of one input file (an alias counts all it stands for each time it is used); simplify it", MaxNodes)})
	}
	return false
}
