import { contextBridge, ipcRenderer } from 'electron';
import { createBridge } from './bridge.ts';

// The sandboxed preload exposes exactly one object; the page never gets ipcRenderer.
contextBridge.exposeInMainWorld(
  'wkDesktop',
  createBridge((channel, payload) => ipcRenderer.invoke(channel, payload)),
);
