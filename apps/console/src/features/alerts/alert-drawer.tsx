import { Badge, Button, Code, CopyButton, Drawer, Group, Stack, Table, Text } from '@mantine/core';
import { SeverityBadge } from '../../components/badges.tsx';
import { Raw, ServerText, useI18n } from '../../i18n/i18n.tsx';
import { evidencePairs, type AlertRow } from './view-model.ts';

/** One alert's evidence: what was measured, since when, its fingerprint; copyable as JSON. */
export function AlertDrawer({ row, onClose }: { row: AlertRow | undefined; onClose: () => void }) {
  const { t, f } = useI18n();
  const time = (s: string | undefined) => (s ? f.dateTime(Date.parse(s)) : '–');
  const { key: _key, level: _level, nodeId: _nodeId, nodeName: _nodeName, ...alert } = row ?? ({} as AlertRow);
  return (
    <Drawer
      opened={row !== undefined}
      onClose={onClose}
      position="right"
      size="lg"
      title={t('alerts.drawerTitle')}
      closeButtonProps={{ 'aria-label': t('common.close') }}
    >
      {row && (
        <Stack gap="sm" data-testid="alert-drawer">
          <Group gap="xs">
            <SeverityBadge level={row.level} />
            <Badge variant="outline" color={row.active ? 'red' : 'gray'}>
              {row.active ? t('alerts.active') : t('alerts.resolved')}
            </Badge>
          </Group>
          <Text fw={600} size="lg">
            <ServerText text={row.message} />
          </Text>
          {row.hint && (
            <Text size="sm">
              {t('alerts.hint')}: <ServerText text={row.hint} />
            </Text>
          )}
          <Table withRowBorders={false} verticalSpacing={2} data-testid="alert-facts">
            <Table.Tbody>
              <Table.Tr>
                <Table.Th w={140}>{t('alerts.node')}</Table.Th>
                <Table.Td>
                  <Raw>{row.nodeName}</Raw>
                </Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>{t('alerts.component')}</Table.Th>
                <Table.Td>
                  <Raw>{row.component}</Raw>
                </Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>{t('alerts.kind')}</Table.Th>
                <Table.Td>
                  <Raw>{row.kind}</Raw>
                </Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>{t('alerts.firstSeen')}</Table.Th>
                <Table.Td className="num">{time(row.first_seen)}</Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>{t('alerts.lastSeen')}</Table.Th>
                <Table.Td className="num">{time(row.last_seen)}</Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>{t('alerts.resolvedAt')}</Table.Th>
                <Table.Td className="num">{time(row.resolved_at)}</Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>{t('alerts.count')}</Table.Th>
                <Table.Td className="num">{f.int(row.count)}</Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>{t('alerts.fingerprint')}</Table.Th>
                <Table.Td>
                  <Code data-testid="alert-fingerprint" data-raw>
                    {row.fingerprint ?? row.id}
                  </Code>
                </Table.Td>
              </Table.Tr>
            </Table.Tbody>
          </Table>
          <Text fw={600}>{t('alerts.evidence')}</Text>
          <Table striped withTableBorder verticalSpacing={4} data-testid="alert-evidence">
            <Table.Tbody>
              {evidencePairs(row).map(([k, v]) => (
                <Table.Tr key={k} data-evidence={k}>
                  <Table.Td ff="monospace" w={200}>
                    <Raw>{k}</Raw>
                  </Table.Td>
                  <Table.Td ff="monospace">
                    <Raw>{v}</Raw>
                  </Table.Td>
                </Table.Tr>
              ))}
              {evidencePairs(row).length === 0 && (
                <Table.Tr>
                  <Table.Td>{t('alerts.noEvidence')}</Table.Td>
                </Table.Tr>
              )}
            </Table.Tbody>
          </Table>
          <CopyButton value={JSON.stringify(alert, null, 2)}>
            {({ copied, copy }) => (
              <Button variant="default" size="xs" onClick={copy} w="fit-content">
                {copied ? t('common.copied') : t('alerts.copyJson')}
              </Button>
            )}
          </CopyButton>
        </Stack>
      )}
    </Drawer>
  );
}
