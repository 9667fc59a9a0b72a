package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/bounded"
	"github.com/istioctl-installer/istioctl/profiles"
)

// DefaultProfile is the profile every other one is laid over.
const DefaultProfile = "default"

// Profiles reads profiles from the embedded set or from <dir>/profiles of a --manifests
// directory.
type Profiles struct {
	fsys   fs.FS
	origin string
}

// NewProfiles returns the embedded profiles when manifestsDir is empty.
func NewProfiles(manifestsDir string) (*Profiles, error) {
	if manifestsDir == "" {
		return &Profiles{fsys: profiles.FS, origin: "built-in profile"}, nil
	}
	dir := filepath.Join(manifestsDir, "profiles")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--manifests %s: no profiles directory at %s", manifestsDir, dir)
	}
	return &Profiles{fsys: os.DirFS(dir), origin: dir}, nil
}

// Names lists the available profiles, sorted.
func (p *Profiles) Names() ([]string, error) {
	entries, err := fs.ReadDir(p.fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("listing profiles in %s: %w", p.origin, err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".yaml") {
			names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
		}
	}
	sort.Strings(names)
	return names, nil
}

// IsPath says a profile reference names a file rather than a profile.
func IsPath(ref string) bool {
	return strings.ContainsRune(ref, os.PathSeparator) || strings.HasSuffix(ref, ".yaml") || strings.HasSuffix(ref, ".yml")
}

// Load decodes the profile named ref (a name, or a file path).
func (p *Profiles) Load(ref string) (map[string]any, v1alpha1.Lines, v1alpha1.Problems) {
	var data []byte
	var source string
	var err error
	if IsPath(ref) {
		source = ref
		data, err = bounded.ReadFile(ref)
	} else {
		source = fmt.Sprintf("%s %q", p.origin, ref)
		if p.origin != "built-in profile" {
			source = path.Join(p.origin, ref+".yaml")
		}
		data, err = bounded.ReadFS(p.fsys, ref+".yaml")
		if errors.Is(err, fs.ErrNotExist) {
			names, _ := p.Names()
			hint := ""
			if s := v1alpha1.Suggest(ref, names); s != "" {
				hint = " (" + strings.TrimPrefix(s, "; ") + ")"
			}
			return nil, nil, v1alpha1.Problems{{Path: "spec.profile", Msg: fmt.Sprintf("profile %q not found%s; the profiles are: %s",
				ref, hint, strings.Join(names, ", "))}}
		}
	}
	if err != nil {
		return nil, nil, v1alpha1.Problems{{Path: "spec.profile", Msg: fmt.Sprintf("reading profile %s: %v", ref, err)}}
	}
	return v1alpha1.DecodeFile(source, data)
}
