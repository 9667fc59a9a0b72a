// Package fastyaml is render's hand-written YAML reader (Parse) and writer (Marshal): they
// read chart output and print objects exactly as yaml.v3 and yaml.v2 do, several times
// faster, and hand anything they do not read or print exactly to those libraries. Only
// render uses them (internal/). The checks that hold them to those libraries are in
// fastyamltest: this package's tests run them over odd and fuzzed inputs, render's over
// every profile's chart output, beside the charts they read. Objects reads chart output
// into objects, falling back to yaml.v3.
package fastyaml
