import { useState } from 'react';
import { MenuToggle, Select, SelectList, SelectOption, Stack, Switch } from '@patternfly/react-core';
import GlobeIcon from '@patternfly/react-icons/dist/esm/icons/globe-icon';
import { useTranslation } from 'react-i18next';
import { chooseLanguage, currentLanguage, languageNames, languages, type Language } from '../../i18n';
import { setDarkMode, storedDarkMode } from '../../settings/darkMode';

/** Dark mode switch and language menu (docs/features.md §2), both kept on this browser. */
export function Preferences() {
  const { t } = useTranslation();
  const [dark, setDark] = useState(storedDarkMode);
  const [languageOpen, setLanguageOpen] = useState(false);
  const language = currentLanguage();

  // Its own height, not PatternFly's full one: a stack as tall as the
  // drawer's foot pushed the user menu below it, out of sight (issue #23).
  // The margin is inline: the console does not ship PatternFly's utilities.
  return (
    <Stack hasGutter style={{ height: 'auto', marginBottom: 'var(--pf-t--global--spacer--md)' }}>
      <Switch
        id="dark-mode"
        label={t('Dark mode')}
        isChecked={dark}
        onChange={(_event, checked) => {
          setDarkMode(checked);
          setDark(checked);
        }}
      />
      <Select
        isOpen={languageOpen}
        onOpenChange={setLanguageOpen}
        selected={language}
        onSelect={(_event, value) => {
          setLanguageOpen(false);
          void chooseLanguage(value as Language);
        }}
        popperProps={{ width: 'trigger' }}
        toggle={(ref) => (
          <MenuToggle
            ref={ref}
            isFullWidth
            icon={<GlobeIcon />}
            isExpanded={languageOpen}
            onClick={() => setLanguageOpen((open) => !open)}
            aria-label={t('Language')}
            data-testid="language-menu"
          >
            {languageNames[language]}
          </MenuToggle>
        )}
      >
        <SelectList>
          {languages.map((lng) => (
            <SelectOption key={lng} value={lng} lang={lng.replace('_', '-')}>
              {languageNames[lng]}
            </SelectOption>
          ))}
        </SelectList>
      </Select>
    </Stack>
  );
}
