package tui

import "charm.land/bubbles/v2/key"

// keyMap is every key the display answers; the footer and the help page
// are drawn from it by bubbles' help, so they cannot drift from Update.
type keyMap struct {
	Up, Down, PageUp, PageDown key.Binding
	Next, Prev, Open, Back     key.Binding
	Table, Votes, Help, Quit   key.Binding
}

func newKeyMap() keyMap {
	return keyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "scroll up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "scroll down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "page down")),
		Next:     key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next agent")),
		Prev:     key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous agent")),
		Open:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "agent full screen")),
		Back:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Table:    key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "coordination table")),
		Votes:    key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "votes")),
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Quit, k.Next, k.Open, k.Table, k.Votes, k.Up, k.Help}
}

func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown},
		{k.Next, k.Prev, k.Open, k.Back},
		{k.Table, k.Votes, k.Help, k.Quit},
	}
}
