import { Floodgate } from './floodgate';

/** The engine shared by decorators and middleware unless they are given another. */
export const floodgate = new Floodgate();
