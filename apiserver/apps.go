package apiserver

import "net/http"

// appJSON is one kind of template a project can make (api-contract.md,
// "apps"). Clients build their "new template" menu from the active ones.
type appJSON struct {
	ID        string `json:"id"`
	Active    bool   `json:"active"`
	Priority  int    `json:"priority"`
	Title     string `json:"title"`
	Icon      string `json:"icon"`
	Color     string `json:"color"`
	DarkColor string `json:"dark_color"`
}

// appList is what the runner can run, by priority: ansible first, as the
// default app of a template. OpenTofu is known to the runner but no runner
// image carries it yet, so it is not offered.
var appList = []appJSON{
	{ID: "ansible", Active: true, Priority: 500, Title: "Ansible Playbook", Icon: "ansible", Color: "black", DarkColor: "white"},
	{ID: "terraform", Active: true, Priority: 400, Title: "Terraform Code", Icon: "terraform", Color: "#7b42bc", DarkColor: "#7b42bc"},
	{ID: "tofu", Active: false, Priority: 300, Title: "OpenTofu Code", Icon: "tofu", Color: "black", DarkColor: "white"},
	{ID: "bash", Active: true, Priority: 200, Title: "Bash Script", Icon: "bash", Color: "black", DarkColor: "white"},
}

func (s *Server) apps(w http.ResponseWriter, _ *http.Request) {
	respond(w, http.StatusOK, appList)
}
