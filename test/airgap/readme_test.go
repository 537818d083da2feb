package airgap_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's air-gap section shows exactly the commands the drill runs
// (testdata/commands.sh, which the drill checks against what it ran).
func TestReadmeShowsTheDrillsCommands(t *testing.T) {
	cmds, err := os.ReadFile(commandsFile)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := "```sh\n" + string(cmds) + "```\n"
	if !strings.Contains(string(readme), block) {
		t.Fatalf("README.md does not show the air-gap drill's commands as one sh block; paste testdata/commands.sh:\n%s", block)
	}
}
