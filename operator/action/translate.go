package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/operator/translate"
)

// ManifestTranslate turns a spec into what moves its install under Helm: per component
// (gateways included) a Helm release's values, its chart and a script that hands the live
// objects to the release, and a README. It never contacts a cluster.
type ManifestTranslate struct {
	*Config
	Spec spec.Options
}

// Translation is the output of a translate, ready to be written.
type Translation struct {
	// Releases are the Helm releases, in install order.
	Releases []TranslatedRelease
	files    []translate.File
}

// TranslatedRelease is one Helm release of a translation.
type TranslatedRelease struct {
	Name, Namespace, Chart string
	// Differs names the objects Helm renders otherwise than istioctl (k8s settings).
	Differs []string
}

// Run resolves and renders the spec and translates it.
func (a *ManifestTranslate) Run(context.Context) (*Translation, error) {
	res, manifests, err := a.render(a.Spec, false)
	if err != nil {
		return nil, err
	}
	r, err := render.NewRenderer(res.IOP.Spec.InstallPackagePath)
	if err != nil {
		return nil, err
	}
	releases, err := translate.Translate(r, res, manifests)
	if err != nil {
		return nil, err
	}
	t := &Translation{}
	if t.files, err = translate.Files(releases, r.Charts); err != nil {
		return nil, err
	}
	for _, rel := range releases {
		t.Releases = append(t.Releases, TranslatedRelease{Name: rel.Name, Namespace: rel.Namespace, Chart: rel.Chart, Differs: rel.Differs})
	}
	return t, nil
}

// Write writes the translation into dir (created if missing; "" makes a new temporary
// directory, as upstream) and returns the directory.
func (t *Translation) Write(dir string) (string, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "istioctl-migrate-")
		if err != nil {
			return "", err
		}
		dir = d
	}
	for _, f := range t.files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("writing the translation: %w", err)
		}
		if err := os.WriteFile(p, f.Data, f.Mode); err != nil {
			return "", fmt.Errorf("writing the translation: %w", err)
		}
		// WriteFile keeps the mode of a file that exists: a script stays executable.
		if err := os.Chmod(p, f.Mode); err != nil {
			return "", fmt.Errorf("writing the translation: %w", err)
		}
	}
	return dir, nil
}
