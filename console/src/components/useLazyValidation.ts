import { useState } from 'react';

/** Field name → the English message of its first failed rule. */
export type Errors<Field extends string = string> = Partial<Record<Field, string>>;

export function hasErrors(errors: Errors): boolean {
  return Object.values(errors).some(Boolean);
}

/**
 * Lazy validation (docs/features.md §5): a form shows no complaint until its first save;
 * from then on the messages follow the input. check() says whether a save
 * may go ahead, so a failed validation makes no call.
 */
export function useLazyValidation<Values, Field extends string>(
  values: Values,
  validate: (values: Values) => Errors<Field>,
) {
  const [checked, setChecked] = useState(false);
  const errors: Errors<Field> = checked ? validate(values) : {};
  return {
    errors,
    check(): boolean {
      setChecked(true);
      return !hasErrors(validate(values));
    },
    reset(): void {
      setChecked(false);
    },
  };
}
