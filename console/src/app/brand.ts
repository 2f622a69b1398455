// The product name is a brand, not text to translate, so it stays out of the catalogs.
export const PRODUCT_NAME = 'Bastion';
