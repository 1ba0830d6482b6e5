import type { ChangeEvent } from 'react';
import type { PlanIssue } from '@parley/shared';
import { useI18n } from '../../i18n/i18n.tsx';
import type { MessageKey } from '../../i18n/messages.ts';
import { getAt, issuesAt, setAt, type Validation } from './model/plan-form.ts';

export type Props = { doc: unknown; v: Validation; onChange: (doc: unknown) => void };

/** Monospace inputs for paths, addresses and times (the label stays in the page's font). */
export const mono = { input: { fontFamily: 'var(--mantine-font-family-monospace)' } };

/** A member's problems in the console's words where planIssues names the kind, else as parleyctl says them. */
export function useIssueText(v: Validation): (ptr: string) => string | undefined {
  const { t } = useI18n();
  const word = (i: PlanIssue) => (i.hint ? t(`mig.issue.${i.hint}` as MessageKey, i.params) : i.message);
  return (ptr) => [...new Set(issuesAt(v, ptr).map(word))].join('; ') || undefined;
}

/** The field props of one member: its value, its problems, and a setter; `data-pointer` names it for tests and people alike. */
export function useField({ doc, v, onChange }: Props) {
  const err = useIssueText(v);
  return {
    text: (ptr: string) => ({
      value: typeof getAt(doc, ptr) === 'string' ? (getAt(doc, ptr) as string) : '',
      onChange: (e: ChangeEvent<HTMLInputElement>) => onChange(setAt(doc, ptr, e.currentTarget.value)),
      error: err(ptr),
      'data-pointer': ptr,
    }),
    num: (ptr: string) => ({
      value: typeof getAt(doc, ptr) === 'number' ? (getAt(doc, ptr) as number) : '',
      onChange: (n: number | string) => onChange(setAt(doc, ptr, n === '' ? undefined : Number(n))),
      error: err(ptr),
      allowDecimal: false,
      'data-pointer': ptr,
    }),
  };
}
