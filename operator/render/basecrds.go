package render

import "fmt"

// BaseCRDNames names the CustomResourceDefinitions the Base chart installs: what an install
// that relies on an existing Base expects to find.
func (r *Renderer) BaseCRDNames() ([]string, error) {
	ch, err := r.Charts.Load("base")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range ch.CRDObjects() {
		objs, err := crdObjects(f.File.Data, chartLabels(ch.Metadata.Name, ch.Metadata.Version, ch.Metadata.AppVersion), true)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Filename, err)
		}
		for _, o := range objs {
			names = append(names, o.GetName())
		}
	}
	return names, nil
}
