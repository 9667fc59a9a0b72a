package action

import (
	"context"
	"fmt"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// ManifestGenerate renders a spec to YAML without contacting a cluster.
type ManifestGenerate struct {
	*Config
	Spec spec.Options
	// Components limits the render to these components (by name, e.g. Pilot).
	Components []string
	// PerComponent returns one Manifest per component instead of one of everything.
	PerComponent bool
}

// Manifest is rendered YAML: of one component (all its instances together), or of
// everything ("" Component) in install order. YAML.WriteTo writes it; YAML.Bytes is it
// in one slice.
type Manifest struct {
	Component string
	YAML      render.Text
}

// ComponentNames are the names Components takes, in install order.
func ComponentNames() []string {
	var out []string
	for _, c := range component.All {
		out = append(out, string(c.Name))
	}
	return out
}

// Run renders and returns the objects in install order: one Manifest, or with PerComponent
// one per component.
func (a *ManifestGenerate) Run(context.Context) ([]Manifest, error) {
	var only []component.Name
	for _, c := range a.Components {
		n, err := component.Parse(c)
		if err != nil {
			return nil, &UsageError{Err: fmt.Errorf("--component: %w", err)}
		}
		only = append(only, n)
	}
	_, manifests, err := a.render(a.Spec, true, only...)
	if err != nil {
		return nil, err
	}
	if !a.PerComponent {
		y, err := render.Print(manifests)
		if err != nil {
			return nil, err
		}
		return []Manifest{{YAML: y}}, nil
	}
	byComponent := map[component.Name][]render.Manifest{}
	var order []component.Name
	for _, m := range manifests {
		if _, ok := byComponent[m.Instance.Name]; !ok {
			order = append(order, m.Instance.Name)
		}
		byComponent[m.Instance.Name] = append(byComponent[m.Instance.Name], m)
	}
	out := make([]Manifest, 0, len(order))
	for _, name := range order {
		y, err := render.Print(byComponent[name])
		if err != nil {
			return nil, err
		}
		out = append(out, Manifest{Component: string(name), YAML: y})
	}
	return out, nil
}

// UsageError is a setting that cannot be used as given (a bad command line, for a command).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }
