package spec

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/bounded"
)

// Options are the inputs of a resolution, lowest precedence first: the default profile,
// the selected profile, Files left to right ("-" reads Stdin), the aliases, then Sets in
// order.
type Options struct {
	Files []string
	Stdin io.Reader
	Sets  []string
	// Revision is --revision: the same as --set revision=R ("default" means none).
	Revision string
	// ManifestsDir is --manifests: the same as --set installPackagePath=DIR.
	ManifestsDir string
	// Profile is used when neither the files nor --set select one (profile dump NAME).
	Profile string
	// Force turns validation errors into warnings, as upstream's --force.
	Force bool
	// Version is the Istio version this istioctl was built to install: the default
	// profile's image tag ("" keeps the tag the profile names). A build at the version line
	// changes nothing; one built at another VERSION installs that version's images, as
	// upstream's builds do.
	Version string
	// Docs are IstioOperator documents decoded already (a fleet file's parts, with the
	// fleet file's lines), laid over the Files in order.
	Docs []Doc
}

// Doc is an IstioOperator document decoded elsewhere: its tree, where it came from and the
// line of each of its fields (keyed by IstioOperator path).
type Doc struct {
	Source string
	Tree   map[string]any
	Lines  v1alpha1.Lines
}

// Resolved is a merged, validated install spec.
type Resolved struct {
	// Tree is the merged IstioOperator document as generic data.
	Tree map[string]any
	IOP  *v1alpha1.IstioOperator
	// Profile is the selected profile's name (or file).
	Profile  string
	Warnings v1alpha1.Problems
	// origins are where each field was last set (file and line, or the --set flag).
	origins map[string]v1alpha1.Problem
}

// Where names the file and line (or the --set flag) that set path, or its nearest
// enclosing field, so a problem found later (by the render) names what to fix.
func (r *Resolved) Where(path string) (source string, line int) {
	if r == nil {
		return "", 0
	}
	// an overlay or patch is where its path (or kind, name) was set, not its component
	for _, f := range []string{".path", ".kind", ".name"} {
		if o, ok := r.origins[path+f]; ok {
			return o.Source, o.Line
		}
	}
	o, _ := originOf(r.origins, path)
	return o.Source, o.Line
}

// resolution is one Resolve's state: the problems found so far and where each field was
// last set, so errors found on the merged tree can name the file and line (or the --set
// flag) to fix.
type resolution struct {
	opts     Options
	problems v1alpha1.Problems
	origins  map[string]v1alpha1.Problem
}

func (r *resolution) record(source string, lines v1alpha1.Lines) {
	// A list replaces the earlier layers' list (Merge): where they set fields of its items
	// is no longer where the merged items come from.
	for path := range lines {
		if i := strings.LastIndex(path, "["); i > 0 && strings.HasSuffix(path, "]") {
			list := path[:i] + "["
			for o := range r.origins {
				if strings.HasPrefix(o, list) {
					delete(r.origins, o)
				}
			}
		}
	}
	for path, line := range lines {
		r.origins[path] = v1alpha1.Problem{Source: source, Line: line}
	}
}

// failed returns the error of the problems so far, with the warnings, if any is an error.
func (r *resolution) failed() (*Resolved, error) {
	if r.opts.Force {
		// a field's problem; what makes a file unreadable stays an error
		r.forceWhere(func(p v1alpha1.Problem) bool { return p.Path != "" })
	}
	if errs := r.problems.Errors(); len(errs) > 0 {
		return &Resolved{Warnings: r.problems.Warnings()}, errs
	}
	return nil, nil
}

// Resolve merges and validates the inputs. Every problem found is reported together: the
// error is a v1alpha1.Problems. On error the returned Resolved (if any) carries the warnings.
func Resolve(opts Options) (*Resolved, error) {
	r := &resolution{opts: opts, origins: map[string]v1alpha1.Problem{}}
	user, userLines := r.readFiles()
	sets := r.parseSets()
	if res, err := r.failed(); err != nil {
		return res, err
	}
	profileName := firstString(lastSet(sets, "profile"), stringAt(user, "spec", "profile"), opts.Profile, DefaultProfile)
	tree, err := r.loadProfiles(profileName, firstString(lastSet(sets, "installPackagePath"), stringAt(user, "spec", "installPackagePath")))
	if err != nil {
		return nil, err
	}
	if res, err := r.failed(); err != nil {
		return res, err
	}
	tree = Merge(tree, user)
	for _, record := range userLines {
		record()
	}
	for _, f := range sets {
		concrete, err := applySet(tree, f)
		if err != nil && r.opts.Force {
			// as upstream's --force: an unknown field is set all the same (validate makes
			// the problem a warning)
			lenient := f
			lenient.lenient = true
			if c, again := applySet(tree, lenient); again == nil {
				r.problems = append(r.problems, asProblem(err))
				r.origins[c] = v1alpha1.Problem{Source: "--set " + f.Raw}
				continue
			}
		}
		if err != nil {
			r.problems = append(r.problems, asProblem(err))
			continue
		}
		r.origins[concrete] = v1alpha1.Problem{Source: "--set " + f.Raw}
	}
	if spec, ok := tree["spec"].(map[string]any); ok {
		spec["profile"] = profileName
	}
	r.validate(tree)
	if res, err := r.failed(); err != nil {
		return res, err
	}
	iop, err := typed(tree)
	if err != nil {
		return nil, err
	}
	return &Resolved{Tree: tree, IOP: iop, Profile: profileName, Warnings: r.problems.Warnings(), origins: r.origins}, nil
}

// readFiles reads and merges the -f files, left to right; each file's lines are recorded
// by the returned functions, once the profiles (which the files override) are.
func (r *resolution) readFiles() (map[string]any, []func()) {
	user := map[string]any{}
	var userLines []func()
	stdinUsed := false
	for i, f := range r.opts.Files {
		var data []byte
		var err error
		name := f
		if f == "-" {
			if stdinUsed || i != len(r.opts.Files)-1 {
				r.problems = append(r.problems, v1alpha1.Problem{Source: "-f -", Msg: "standard input can be read once, as the last -f"})
				continue
			}
			stdinUsed, name = true, "<stdin>"
			stdin := r.opts.Stdin
			if stdin == nil {
				stdin = os.Stdin
			}
			data, err = bounded.ReadStdin(stdin)
		} else {
			data, err = bounded.ReadFile(f)
		}
		if err != nil {
			r.problems = append(r.problems, v1alpha1.Problem{Source: name, Msg: fmt.Sprintf("cannot read: %v", err)})
			continue
		}
		tree, lines, ps := v1alpha1.DecodeFile(name, data)
		r.problems = append(r.problems, ps...)
		userLines = append(userLines, func() { r.record(name, lines) })
		if tree != nil {
			user = Merge(user, tree)
		}
	}
	for _, d := range r.opts.Docs {
		userLines = append(userLines, func() { r.record(d.Source, d.Lines) })
		user = Merge(user, d.Tree)
	}
	return user, userLines
}

// parseSets parses the --set flags, with --revision and --manifests as the flags they
// stand for, first.
func (r *resolution) parseSets() []SetFlag {
	raws := r.opts.Sets
	if rev := r.opts.Revision; rev != "" && rev != v1alpha1.DefaultRevision {
		raws = append([]string{"revision=" + rev}, raws...)
	}
	if r.opts.ManifestsDir != "" {
		raws = append([]string{"installPackagePath=" + r.opts.ManifestsDir}, raws...)
	}
	var sets []SetFlag
	for _, raw := range raws {
		f, err := ParseSetFlag(raw)
		if err != nil {
			r.problems = append(r.problems, v1alpha1.Problem{Source: "--set " + raw, Msg: err.Error()})
			continue
		}
		sets = append(sets, f)
	}
	return sets
}

// loadProfiles is the default profile, with the named one laid over it, from the charts'
// profiles in manifests ("" for the built-in ones).
func (r *resolution) loadProfiles(profileName, manifests string) (map[string]any, error) {
	profs, err := NewProfiles(manifests)
	if err != nil {
		return nil, v1alpha1.Problems{{Path: "spec.installPackagePath", Msg: err.Error()}}
	}
	tree, lines, ps := profs.Load(DefaultProfile)
	r.problems = append(r.problems, ps...)
	if sp, ok := tree["spec"].(map[string]any); ok && r.opts.Version != "" {
		sp["tag"] = r.opts.Version
	}
	r.record(fmt.Sprintf("profile %q", DefaultProfile), lines)
	if profileName != DefaultProfile {
		prof, lines, ps := profs.Load(profileName)
		r.problems = append(r.problems, ps...)
		r.record(fmt.Sprintf("profile %q", profileName), lines)
		if prof != nil && tree != nil {
			tree = Merge(tree, prof)
		}
	}
	return tree, nil
}

// validate translates spec.external and validates the merged tree, naming where each
// problem's field was set; with Force errors become warnings.
func (r *resolution) validate(tree map[string]any) {
	// spec.external becomes upstream's values before validation, so what it stands for is
	// checked like the rest; a value a user file or --set gave that says otherwise is a
	// conflict, one a profile gave is replaced.
	userSet := func(path string) bool {
		o, ok := r.origins[path]
		return ok && !strings.HasPrefix(o.Source, "profile ")
	}
	translated := append(TranslateExternal(tree, userSet), FillEastWestGateway(tree)...)
	for _, p := range append(translated, Validate(tree)...) {
		if o, ok := originOf(r.origins, p.Path); ok {
			p.Source, p.Line = o.Source, o.Line
		}
		r.problems = append(r.problems, p)
	}
	if r.opts.Force {
		r.forceWhere(func(v1alpha1.Problem) bool { return true })
	}
}

// forceWhere makes the errors that match warnings, as --force does.
func (r *resolution) forceWhere(match func(v1alpha1.Problem) bool) {
	for i, p := range r.problems {
		if !p.Warning && match(p) {
			r.problems[i].Warning = true
			r.problems[i].Msg += " (ignored because of --force)"
		}
	}
}

// originOf finds where path, or the nearest enclosing field, was set.
func originOf(origins map[string]v1alpha1.Problem, path string) (v1alpha1.Problem, bool) {
	// Attribute to spec.<field> at the shallowest: "spec" itself is set by every file.
	for strings.Count(path, ".") >= 1 {
		if o, ok := origins[path]; ok {
			return o, true
		}
		cut := strings.LastIndexAny(path, ".[")
		if cut <= 0 {
			break
		}
		path = path[:cut]
	}
	return v1alpha1.Problem{}, false
}

func typed(tree map[string]any) (*v1alpha1.IstioOperator, error) {
	b, err := json.Marshal(tree)
	if err != nil {
		return nil, fmt.Errorf("encoding the merged spec: %w", err)
	}
	iop := &v1alpha1.IstioOperator{}
	if err := json.Unmarshal(b, iop); err != nil {
		return nil, fmt.Errorf("decoding the merged spec: %w", err)
	}
	return iop, nil
}

func asProblem(err error) v1alpha1.Problem {
	if p, ok := err.(v1alpha1.Problem); ok {
		return p
	}
	return v1alpha1.Problem{Msg: err.Error()}
}

func lastSet(sets []SetFlag, key string) string {
	v := ""
	for _, f := range sets {
		if len(f.Path) == 1 && f.Path[0].kind == segKey && f.Path[0].Key == key {
			v = f.Value
		}
	}
	return v
}

func stringAt(tree map[string]any, keys ...string) string {
	v, _ := Lookup(tree, keys...)
	s, _ := v.(string)
	return s
}

func firstString(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
