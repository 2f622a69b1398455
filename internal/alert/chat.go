package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// DefaultTelegramAPI is Telegram's Bot API.
const DefaultTelegramAPI = "https://api.telegram.org"

// Telegram sends a bot message to the project's chat id.
type Telegram struct {
	// Token is the bot's token (from @BotFather).
	Token Secret
	// APIURL is the Bot API's base URL (DefaultTelegramAPI when empty): a
	// self-hosted Bot API server, or a proxy.
	APIURL string
	Client *http.Client
}

type telegramSender struct{ cfg Telegram }

func (t *telegramSender) kind() string { return "telegram" }

func (t *telegramSender) label(chat string) string { return "Telegram chat " + chat }

func (t *telegramSender) send(ctx context.Context, chat string, m message) error {
	token, err := t.cfg.Token.Read()
	if err != nil {
		return fmt.Errorf("Telegram bot token: %w", err)
	}
	base := strings.TrimRight(t.cfg.APIURL, "/")
	if base == "" {
		base = DefaultTelegramAPI
	}
	body := map[string]any{"chat_id": chat, "text": m.Chat, "disable_web_page_preview": true}
	return scrub(postJSON(ctx, t.cfg.Client, base+"/bot"+token+"/sendMessage", body, telegramAnswer), tokenSecrets(token)...)
}

// telegramAnswer reads the Bot API's {"ok": false, "description": …}.
func telegramAnswer(status int, body []byte) error {
	var answer struct {
		OK          bool   `json:"ok"`
		Description string `json:"description"`
	}
	if err := json.Unmarshal(body, &answer); err == nil && answer.OK && status/100 == 2 {
		return nil
	}
	if answer.Description != "" {
		return fmt.Errorf("Telegram answered %d: %s", status, answer.Description)
	}
	return fmt.Errorf("Telegram answered %d", status)
}

// Webhook posts {"text": …} to an incoming webhook, which Slack and
// Mattermost (and Rocket.Chat, Discord's /slack endpoint, …) accept.
type Webhook struct {
	// URL is read from a file: an incoming webhook's URL is its credential.
	URL    Secret
	Client *http.Client
}

type webhookSender struct{ cfg Webhook }

func (w *webhookSender) kind() string { return "webhook" }

func (w *webhookSender) label(string) string { return "the chat webhook" }

func (w *webhookSender) send(ctx context.Context, _ string, m message) error {
	url, err := w.cfg.URL.Read()
	if err != nil {
		return fmt.Errorf("chat webhook URL: %w", err)
	}
	return scrub(postJSON(ctx, w.cfg.Client, url, map[string]string{"text": m.Chat}, webhookAnswer), urlSecrets(url)...)
}

func webhookAnswer(status int, body []byte) error {
	if status/100 == 2 {
		return nil
	}
	// The answer is the receiver's own words ("no_text", "invalid_token");
	// a short piece of it says why without echoing a page of HTML.
	text := strings.TrimSpace(string(body))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	if text == "" {
		return fmt.Errorf("the webhook answered %d", status)
	}
	return fmt.Errorf("the webhook answered %d: %s", status, text)
}

func postJSON(ctx context.Context, c *http.Client, url string, body any, answer func(int, []byte) error) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return errors.New("the URL is not valid") // the parse error would repeat it
	}
	req.Header.Set("Content-Type", "application/json")
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return answer(resp.StatusCode, got)
}
