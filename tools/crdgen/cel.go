package main

import (
	"fmt"

	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/parser"
)

// Istio's CEL macros (istio.io/api GUIDELINES.md), expanded when the CRD is written since
// the apiserver does not know them:
//
//	default(self.x, D)      self.x if set, else D
//	oneof(self.x, self.y)   at most one of them is set
//	self.index(D, a, b)     self.a.b if every step is set, else D
//
// Every rule is parsed and printed again by cel-go, expanded or not, so the text is the
// canonical form of the expression (double-quoted strings, spaces around operators).
var istioMacros = []parser.Macro{
	parser.NewGlobalMacro("default", 2, expandDefault),
	parser.NewGlobalVarArgMacro("oneof", expandOneof),
	parser.NewReceiverVarArgMacro("index", expandIndex),
}

// expandRule rewrites a CEL rule with Istio's macros expanded.
func expandRule(rule string) (string, error) {
	// Only Istio's macros are known to this parser: the standard ones (has, all, exists,
	// ...) stay calls, printed as written; ours are replaced by their expansions.
	p, err := parser.NewParser(parser.Macros(istioMacros...))
	if err != nil {
		return "", err
	}
	tree, errs := p.Parse(common.NewTextSource(rule))
	if len(errs.GetErrors()) > 0 {
		return "", fmt.Errorf("CEL rule %q: %s", rule, errs.ToDisplayString())
	}
	out, err := parser.Unparse(tree.Expr(), tree.SourceInfo())
	if err != nil {
		return "", fmt.Errorf("CEL rule %q: %w", rule, err)
	}
	return out, nil
}

// presence is has(e) for a field selection e (self.x).
func presence(eh parser.ExprHelper, e ast.Expr) (ast.Expr, *common.Error) {
	if e.Kind() != ast.SelectKind {
		return nil, eh.NewError(e.ID(), "argument must be a field selection like self.x")
	}
	sel := e.AsSelect()
	return eh.NewPresenceTest(eh.Copy(sel.Operand()), sel.FieldName()), nil
}

func expandDefault(eh parser.ExprHelper, _ ast.Expr, args []ast.Expr) (ast.Expr, *common.Error) {
	has, err := presence(eh, args[0])
	if err != nil {
		return nil, err
	}
	return eh.NewCall(operators.Conditional, has, eh.Copy(args[0]), args[1]), nil
}

func expandOneof(eh parser.ExprHelper, _ ast.Expr, args []ast.Expr) (ast.Expr, *common.Error) {
	var sum ast.Expr
	for _, a := range args {
		has, err := presence(eh, a)
		if err != nil {
			return nil, err
		}
		one := eh.NewCall(operators.Conditional, has, eh.NewLiteral(types.Int(1)), eh.NewLiteral(types.Int(0)))
		if sum == nil {
			sum = one
		} else {
			sum = eh.NewCall(operators.Add, sum, one)
		}
	}
	if sum == nil {
		return nil, eh.NewError(0, "oneof needs at least one field")
	}
	return eh.NewCall(operators.LessEquals, sum, eh.NewLiteral(types.Int(1))), nil
}

func expandIndex(eh parser.ExprHelper, target ast.Expr, args []ast.Expr) (ast.Expr, *common.Error) {
	if len(args) < 2 {
		return nil, eh.NewError(target.ID(), "index needs a default and at least one field")
	}
	var cond ast.Expr
	path := target
	for _, a := range args[1:] {
		if a.Kind() != ast.IdentKind {
			return nil, eh.NewError(a.ID(), "index steps must be field names")
		}
		name := a.AsIdent()
		has := eh.NewPresenceTest(eh.Copy(path), name)
		if cond == nil {
			cond = has
		} else {
			cond = eh.NewCall(operators.LogicalAnd, cond, has)
		}
		path = eh.NewSelect(eh.Copy(path), name)
	}
	return eh.NewCall(operators.Conditional, cond, path, args[0]), nil
}
